package io.fermion.core

import java.io.{BufferedReader, File, InputStreamReader}
import java.net.{HttpURLConnection, ServerSocket, URI}
import java.nio.charset.StandardCharsets

import io.fermion.core.dataset._
import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll

/** The commit-protocol suite on S3: S3A (hadoop-aws 3.5.0, the Hadoop of Spark 4.3.0) against the
  * local S3-compatible server the end-to-end tests use (`tests/s3_server.py`: moto from PyPI, in the
  * project's Python environment), started and stopped here. Conditional PUT (`If-None-Match: *`)
  * publishes; with conditional writes turned off in S3A, an external manifest store on the local
  * file system does. Each storage has its own bucket, so that Hadoop's cached S3A instances never
  * carry one storage's settings into another. */
class S3CommitProtocolSuite extends CommitProtocolBehaviours with BeforeAndAfterAll {
  private var server: Process = _
  private var endpoint: String = _
  private val counter = new java.util.concurrent.atomic.AtomicInteger
  private lazy val storeDir = TestFiles.tempDir("fermion-s3-store").toUri.toString

  private val buckets = Seq("fermion-default", "fermion-listing", "fermion-external")

  override def beforeAll(): Unit = {
    val root = S3TestServer.projectRoot()
    val port = S3TestServer.freePort()
    server = new ProcessBuilder(
      new File(root, ".venv/bin/python").getPath,
      new File(root, "tests/s3_server.py").getPath,
      port.toString
    ).redirectError(ProcessBuilder.Redirect.DISCARD).start()
    val ready = new BufferedReader(new InputStreamReader(server.getInputStream, StandardCharsets.UTF_8)).readLine()
    assert(ready == "ready", "the local S3 server (tests/s3_server.py) did not start")
    endpoint = s"http://127.0.0.1:$port"
    buckets.foreach(b => S3TestServer.createBucket(endpoint, b))
  }

  override def afterAll(): Unit = if (server != null) {
    server.destroy()
    server.waitFor()
  }

  private def s3a: Map[String, String] = Map(
    "fs.s3a.endpoint" -> endpoint,
    "fs.s3a.endpoint.region" -> "us-east-1",
    "fs.s3a.path.style.access" -> "true",
    "fs.s3a.connection.ssl.enabled" -> "false",
    "fs.s3a.access.key" -> "testing",
    "fs.s3a.secret.key" -> "testing",
    "fs.s3a.aws.credentials.provider" -> "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
  )

  private def root(bucket: String): Path = new Path(s"s3a://$bucket/t${counter.incrementAndGet()}")

  protected def storages: Seq[(String, () => Path, () => Map[String, String])] = Seq(
    ("s3a, conditional put, latest by hint (default)", () => root(buckets(0)), () => s3a),
    ("s3a, conditional put, listing", () => root(buckets(1)), () => s3a + (VersionHint.Setting -> "list")),
    (
      "s3a without conditional writes, external store",
      () => root(buckets(2)),
      () =>
        s3a ++ Map(
          "fs.s3a.create.conditional.enabled" -> "false",
          CommitStores.Setting -> CommitStores.External,
          ExternalCommitStore.DirSetting -> storeDir
        )
    )
  )
}

/** Starting the local S3 server of `tests/s3_server.py` from a JVM test. */
object S3TestServer {

  /** The repository root: the nearest directory up from the working directory that holds the server. */
  def projectRoot(): File = {
    var dir = new File(".").getAbsoluteFile
    while (dir != null && !new File(dir, "tests/s3_server.py").isFile) dir = dir.getParentFile
    assert(dir != null, "tests/s3_server.py not found above the working directory")
    assert(new File(dir, ".venv/bin/python").canExecute, "no .venv: run the build through dev/sbt (dev/python-env)")
    dir
  }

  def freePort(): Int = {
    val s = new ServerSocket(0)
    try s.getLocalPort
    finally s.close()
  }

  /** A bucket through S3's CreateBucket (the server does not check signatures). */
  def createBucket(endpoint: String, bucket: String): Unit = {
    val c = URI.create(s"$endpoint/$bucket").toURL.openConnection().asInstanceOf[HttpURLConnection]
    c.setRequestMethod("PUT")
    c.setFixedLengthStreamingMode(0)
    c.setDoOutput(true)
    c.getOutputStream.close()
    val code = c.getResponseCode
    assert(code == 200, s"CreateBucket $bucket answered $code")
    c.disconnect()
  }
}
