package io.fermion.core

import java.io.{BufferedReader, File, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.util.concurrent.{Callable, Executors}

import scala.jdk.CollectionConverters._

import io.fermion.core.dataset._
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.hdfs.MiniDFSCluster
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** The commit protocol (docs/table-format.md 11, 12) against real file systems, run the same way on
  * each: writers in separate JVM processes appending at once, conflicting deletes, a writer killed
  * mid-commit, leftovers of a crash between data and manifest, time travel, tags and cleanup. Each
  * storage runs with every way of finding the latest version and with an external manifest store.
  * Nothing of the FileSystem API is mocked. */
abstract class CommitProtocolBehaviours extends AnyFunSuite {

  /** A fresh dataset root and the settings every process uses for it. */
  protected def storages: Seq[(String, () => Path, () => Map[String, String])]

  /** Writer processes x appends each (N x M): 4 x 6 on each store's first (default) way of
    * committing, 3 x 3 on the variants, which share most of its code (enough for writers to lose
    * races; `dev/soak concurrency` runs the long version). Each writer is a JVM of its own, whose
    * start costs more than its appends. */
  protected def writersFor(label: String): Int = if (label == storages.head._1) 4 else 3
  protected def appendsFor(label: String): Int = if (label == storages.head._1) 6 else 3

  private def confOf(settings: Map[String, String]): Configuration = {
    val c = new Configuration()
    settings.foreach { case (k, v) => c.set(k, v) }
    c
  }

  private def worker(root: Path, id: Int, appends: Int, settings: Map[String, String]): Process = {
    val java = new File(System.getProperty("java.home"), "bin/java").getPath
    val cmd = Seq(
      java,
      "-Xmx256m",
      "-XX:TieredStopAtLevel=1",
      "-cp",
      System.getProperty("java.class.path"),
      CommitWorker.getClass.getName.stripSuffix("$"),
      root.toString,
      id.toString,
      appends.toString
    ) ++
      settings.map { case (k, v) => s"$k=$v" }
    new ProcessBuilder(cmd: _*).redirectError(ProcessBuilder.Redirect.INHERIT).start()
  }

  private def lines(p: Process): Seq[String] =
    new BufferedReader(new InputStreamReader(p.getInputStream, StandardCharsets.UTF_8)).lines().iterator().asScala.toSeq

  /** Every version v holds v-1's fragments plus the one its append added; nothing lost, nothing twice. */
  private def checkAppendHistory(ds: FermionDataset, from: Long = 1): Unit = {
    val vs = ds.versionNumbers().filter(_ >= from)
    vs.sliding(2).foreach {
      case Seq(a, b) =>
        assert(b == a + 1, s"versions are consecutive: $a then $b")
        val (ma, mb) = (ds.manifest(a), ds.manifest(b))
        assert(mb.fragments.take(ma.fragments.size) == ma.fragments, s"version $b keeps version $a's fragments")
        assert(mb.fragments.size == ma.fragments.size + 1, s"version $b adds one fragment")
      case _ =>
    }
  }

  for ((label, newRoot, settingsOf) <- storages) {
    def settings: Map[String, String] = settingsOf()
    val appendsEach = appendsFor(label)
    val writers = writersFor(label)
    test(s"$label: $writers writer processes x $appendsEach appends each: every commit visible once") {
      val root = newRoot()
      val ds = new FermionDataset(root, confOf(settings))
      ds.commit(0, Operation.Append(CommitWorker.schema, IndexedSeq.empty))
      val procs = (0 until writers).map(w => worker(root, w, appendsEach, settings))
      val outputs = procs.map(lines)
      procs.zipWithIndex.foreach { case (p, w) => assert(p.waitFor() == 0, s"writer $w failed") }
      val committed = outputs.flatten.map(_.split(" ")).map(a => a(1) -> a(2).toLong)
      assert(committed.size == writers * appendsEach)
      assert(committed.map(_._2).distinct.size == committed.size, "each commit got its own version")
      val latest = ds.latest().get
      val files = latest.fragments.flatMap(_.files.map(_.path))
      assert(latest.version == 1 + writers * appendsEach, s"versions: ${ds.versionNumbers()}")
      assert(files.size == writers * appendsEach && files.toSet == committed.map(_._1).toSet, "nothing lost or doubled")
      committed.foreach { case (f, v) =>
        assert(ds.manifest(v).fragments.last.files.head.path == f, s"version $v is the commit that reported it")
      }
      assert(latest.fragments.map(_.id).distinct.size == files.size)
      checkAppendHistory(ds)
      info(s"$label: $writers processes x $appendsEach appends: ${committed.size} commits reported, " +
        s"latest version ${latest.version} with ${files.size} fragments")
    }

    test(s"$label: conflicting deletes from one read version: exactly one wins, the other fails typed") {
      val ds = new FermionDataset(newRoot(), confOf(settings))
      ds.commit(
        0,
        Operation.Append(CommitWorker.schema, (0 until 3).map(i => CommitWorker.fragment(s"data/$i.fermion")))
      )
      val target = ds.manifest(1).fragments.head
      val pool = Executors.newFixedThreadPool(2)
      try {
        val results = (0 until 2).map(i =>
          pool.submit(new Callable[Either[Throwable, Manifest]] {
            def call(): Either[Throwable, Manifest] =
              try Right(new FermionDataset(ds.root, confOf(settings)).commit(
                  1,
                  Operation.Delete(
                    IndexedSeq(target.copy(deletion = Some(DeletionFile(s"_deletions/$i.bin", 2, 1)))),
                    Set.empty,
                    s"delete $i"
                  )
                ))
              catch { case e: Throwable => Left(e) }
          })
        ).map(_.get())
        assert(results.count(_.isRight) == 1, results.toString)
        assert(results.collect { case Left(_: FermionCommitConflictException) => 1 }.sum == 1, results.toString)
        // a delete of another fragment still applies over the winner
        val other = ds.manifest(1).fragments(2)
        assert(ds.commit(1, Operation.Delete(IndexedSeq.empty, Set(other.id), "other")).version == 3)
      } finally pool.shutdownNow()
    }

    test(s"$label: a writer killed mid-commit and a crash between data and manifest leave every version readable") {
      val root = newRoot()
      val ds = new FermionDataset(root, confOf(settings))
      ds.commit(0, Operation.Append(CommitWorker.schema, IndexedSeq.empty))
      val p = worker(root, 9, -1, settings)
      val out = new BufferedReader(new InputStreamReader(p.getInputStream, StandardCharsets.UTF_8))
      (0 until 5).foreach(_ => assert(out.readLine() != null, "the writer commits"))
      p.destroyForcibly().waitFor()
      // what a writer that dies after its data and transaction files, before publication, leaves
      val fs = ds.fs
      FileSystemTestFiles.write(fs, new Path(root, "data/orphan.fermion"), "not referenced")
      FileSystemTestFiles.write(fs, new Path(root, "_transactions/1-orphan.txn"), "never named by a manifest")
      FileSystemTestFiles.write(fs, new Path(root, "_versions/.tmp-orphan-1"), "partial manifest")
      val latest = ds.latestVersion().get
      assert(latest >= 6)
      checkAppendHistory(ds)
      (1L to latest).foreach(v => ds.manifest(v))
      val next = ds.commit(
        latest,
        Operation.Append(CommitWorker.schema, IndexedSeq(CommitWorker.fragment("data/after.fermion")))
      )
      assert(next.version == latest + 1 && ds.latest().get == next)
      // cleanup removes the leftovers and the old versions, keeps the latest and what it references
      val removed = ds.cleanup(System.currentTimeMillis() + 1000)
      assert(removed.versionsRemoved == latest && ds.versionNumbers() == Seq(next.version))
      assert(!fs.exists(new Path(root, "data/orphan.fermion")) && !fs.exists(new Path(root, "_versions/.tmp-orphan-1")))
      assert(ds.latestVersion().contains(next.version) && ds.latest().get == next)
      assert(
        ds.commit(next.version, Operation.Append(CommitWorker.schema, IndexedSeq.empty)).version == next.version + 1
      )
    }

    test(s"$label: time travel by version, time and tag; tags are created once") {
      val ds = new FermionDataset(newRoot(), confOf(settings))
      val ms = (1 to 4).map(i =>
        ds.commit(i - 1L, Operation.Append(CommitWorker.schema, IndexedSeq(CommitWorker.fragment(s"data/$i.fermion"))))
      )
      assert(ms.map(_.version) == Seq(1L, 2L, 3L, 4L) && ds.latestVersion().contains(4L))
      assert(ds.manifest(2) == ms(1) && ds.versionAsOfTime(ms(2).timestampMillis).version == 3)
      intercept[FermionVersionNotFoundException](ds.manifest(5))
      ds.createTag("two", 2)
      val e = intercept[IllegalArgumentException](ds.createTag("two", 3))
      assert(e.getMessage.contains("already exists"))
      assert(ds.tags == Map("two" -> 2L) && ds.tagVersion("two") == 2)
      ds.cleanup(System.currentTimeMillis() + 1000)
      assert(ds.versionNumbers() == Seq(2L, 4L), "the tagged and the latest version stay")
      assert(ds.latestVersion().contains(4L))
      ds.deleteTag("two")
      assert(ds.tags.isEmpty)
      intercept[FermionVersionNotFoundException](ds.deleteTag("two"))
    }
  }
}

/** Small files written through a Hadoop FileSystem. */
object FileSystemTestFiles {
  def write(fs: FileSystem, p: Path, text: String): Unit = {
    val out = fs.create(p, true)
    try out.write(text.getBytes(StandardCharsets.UTF_8))
    finally out.close()
  }
}

/** The local file system: hard links publish. */
class LocalCommitProtocolSuite extends CommitProtocolBehaviours {
  private def root(): Path = new Path(TestFiles.tempDir("fermion-commit").resolve("t").toUri)
  private lazy val storeDir = TestFiles.tempDir("fermion-store").toUri.toString
  protected def storages: Seq[(String, () => Path, () => Map[String, String])] = Seq(
    ("local, link, listing", () => root(), () => Map.empty),
    ("local, link, latest by hint", () => root(), () => Map(VersionHint.Setting -> "hint")),
    (
      "local, external store",
      () => root(),
      () => Map(CommitStores.Setting -> CommitStores.External, ExternalCommitStore.DirSetting -> storeDir)
    )
  )

  test("a store without atomic create fails with the typed error naming the setting") {
    val conf = new Configuration()
    conf.set(CommitStores.Setting, CommitStores.ConditionalPut)
    val ds = new FermionDataset(root(), conf)
    val e =
      intercept[FermionCommitStoreException](ds.commit(0, Operation.Append(CommitWorker.schema, IndexedSeq.empty)))
    assert(e.getMessage.contains("fermion.commitStore") && e.getMessage.contains("fermion.externalStore.dir"))
    conf.set(CommitStores.Setting, "nonsense")
    intercept[FermionCommitStoreException](new FermionDataset(root(), conf).checkCommitStore())
    conf.set(CommitStores.Setting, CommitStores.External)
    val noDir = intercept[FermionCommitStoreException](new FermionDataset(root(), conf).checkCommitStore())
    assert(noDir.getMessage.contains(ExternalCommitStore.DirSetting))
  }

  test("external store: a writer that loses the store's answer recognises its own version") {
    val conf = new Configuration()
    conf.set(CommitStores.Setting, CommitStores.External)
    conf.set(ExternalCommitStore.DirSetting, storeDir)
    conf.set(ExternalCommitStore.ClassSetting, classOf[LostAnswerManifestStore].getName)
    val ds = new FermionDataset(root(), conf)
    ds.commit(0, Operation.Append(CommitWorker.schema, IndexedSeq(CommitWorker.fragment("data/a.fermion"))))
    LostAnswerManifestStore.lose.set(true)
    val m = ds.commit(1, Operation.Append(CommitWorker.schema, IndexedSeq(CommitWorker.fragment("data/b.fermion"))))
    assert(!LostAnswerManifestStore.lose.get, "the answer was lost")
    assert(m.version == 2 && ds.versionNumbers() == Seq(1L, 2L) && ds.latest().get.fragments.size == 2)
  }

  test("external store: a version whose copy is missing is read from the staged file and copied") {
    val conf = new Configuration()
    conf.set(CommitStores.Setting, CommitStores.External)
    conf.set(ExternalCommitStore.DirSetting, storeDir)
    val r = root()
    val ds = new FermionDataset(r, conf)
    ds.commit(0, Operation.Append(CommitWorker.schema, IndexedSeq.empty))
    val m2 = ds.commit(1, Operation.Append(CommitWorker.schema, IndexedSeq(CommitWorker.fragment("data/a.fermion"))))
    // a writer that died between the store's put and the copy: the final name is missing
    val staged = new Path(DatasetLayout.versions(r), ".tmp-died-1")
    val bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(DatasetLayout.manifest(r, 2).toUri))
    val out = ds.fs.create(staged, true)
    out.write(bytes); out.close()
    ds.fs.delete(DatasetLayout.manifest(r, 2), false)
    val store = new FileSystemManifestStore(conf)
    val id = ExternalCommitStore.datasetId(r, ds.fs)
    store.delete(id, s"${DatasetLayout.VersionsDir}/${DatasetLayout.manifestName(2)}")
    assert(store.putIfAbsent(
      id,
      s"${DatasetLayout.VersionsDir}/${DatasetLayout.manifestName(2)}",
      "_versions/.tmp-died-1"
    ))
    val fresh = new FermionDataset(r, conf)
    assert(fresh.latestVersion().contains(2L) && fresh.latest().get == m2)
    assert(ds.fs.exists(DatasetLayout.manifest(r, 2)), "the reader finished the copy")
  }
}

/** A real HDFS (MiniDFSCluster: NameNode and DataNode in this JVM, writers in other JVMs reaching
  * it over RPC): renames publish. Also WebHDFS over the same cluster, a file system without an
  * atomic create Fermion knows: refused unless an external manifest store coordinates it. */
class HdfsCommitProtocolSuite extends CommitProtocolBehaviours with BeforeAndAfterAll {
  private var cluster: MiniDFSCluster = _
  private val base = TestFiles.tempDir("fermion-minidfs").toFile
  private lazy val storeDir = TestFiles.tempDir("fermion-store").toUri.toString
  private val counter = new java.util.concurrent.atomic.AtomicInteger

  override def beforeAll(): Unit = {
    val conf = new Configuration()
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath)
    conf.setInt("dfs.replication", 1)
    cluster = new MiniDFSCluster.Builder(conf, base).numDataNodes(1).build()
    cluster.waitActive()
  }

  override def afterAll(): Unit = if (cluster != null) cluster.shutdown(true)

  private def hdfsRoot(): Path = new Path(s"${cluster.getURI}/t${counter.incrementAndGet()}")
  private def webhdfsRoot(): Path =
    new Path(s"webhdfs://localhost:${cluster.getNameNode.getHttpAddress.getPort}/w${counter.incrementAndGet()}")

  protected def storages: Seq[(String, () => Path, () => Map[String, String])] = Seq(
    ("hdfs, rename, listing", () => hdfsRoot(), () => Map.empty),
    ("hdfs, rename, latest by hint", () => hdfsRoot(), () => Map(VersionHint.Setting -> "hint")),
    (
      "webhdfs data, external store on hdfs",
      () => webhdfsRoot(),
      () =>
        Map(
          CommitStores.Setting -> CommitStores.External,
          ExternalCommitStore.DirSetting -> s"${cluster.getURI}/fermion-store"
        )
    )
  )

  test("webhdfs without an external store: the typed error names the setting, nothing is published") {
    val ds = new FermionDataset(webhdfsRoot(), new Configuration())
    val e =
      intercept[FermionCommitStoreException](ds.commit(0, Operation.Append(CommitWorker.schema, IndexedSeq.empty)))
    assert(e.getMessage.contains("'webhdfs'") && e.getMessage.contains("fermion.commitStore=external"), e.getMessage)
    assert(ds.latestVersion().isEmpty)
  }

  test("rename publication on the NameNode: racing threads publish one version once") {
    val fs = cluster.getFileSystem
    val store = new RenameCommitStore(fs)
    val dir = new Path("/race")
    val pool = Executors.newFixedThreadPool(8)
    try {
      for (round <- 0 until 20) {
        val target = new Path(dir, s"v$round")
        val wins = (0 until 8).map(i =>
          pool.submit(new Callable[Boolean] {
            def call(): Boolean =
              store.createIfAbsent(target, Array.fill(1000)(i.toByte), new Path(dir, s".tmp-$round-$i"))
          })
        ).map(_.get())
        assert(wins.count(identity) == 1, s"round $round")
        val in = fs.open(target)
        val bytes =
          try in.readAllBytes()
          finally in.close()
        assert(bytes.length == 1000 && bytes.distinct.length == 1, "the winner's bytes, whole")
      }
      assert(fs.listStatus(dir).forall(!_.getPath.getName.startsWith(".tmp")), "staging files removed")
    } finally pool.shutdownNow()
  }
}
