import sbt._

/** Every external artifact of the build, at the versions Spark 4.3.0 itself ships. */
object Dependencies {
  val arrowVersion = "19.0.0"
  val zstdJniVersion = "1.5.7-7"
  val roaringVersion = "1.6.10"
  val hadoopVersion = "3.5.0"
  val scalaTestVersion = "3.2.19"
  val jacksonVersion = "2.21.2"

  /** The format core: Arrow, zstd, RoaringBitmap and Hadoop's FileSystem API, all supplied at
    * run time by Spark (Provided), never bundled. */
  val core: Seq[ModuleID] = Seq(
    "org.apache.arrow" % "arrow-vector" % arrowVersion % Provided,
    "org.apache.arrow" % "arrow-memory-netty" % arrowVersion % Provided,
    "com.github.luben" % "zstd-jni" % zstdJniVersion % Provided,
    "org.roaringbitmap" % "RoaringBitmap" % roaringVersion % Provided,
    "org.apache.hadoop" % "hadoop-client-api" % hadoopVersion % Provided,
    // `fermion inspect --json` (Spark ships Jackson).
    "com.fasterxml.jackson.core" % "jackson-core" % jacksonVersion % Provided,
    "org.apache.hadoop" % "hadoop-client-runtime" % hadoopVersion % Test,
    "org.scalatest" %% "scalatest" % scalaTestVersion % Test
  )

  /** Benchmarks run the core outside Spark, so they need its Provided libraries at run time. */
  val benchmarks: Seq[ModuleID] = Seq(
    "org.apache.arrow" % "arrow-vector" % arrowVersion,
    "org.apache.arrow" % "arrow-memory-netty" % arrowVersion,
    "com.github.luben" % "zstd-jni" % zstdJniVersion,
    "org.roaringbitmap" % "RoaringBitmap" % roaringVersion,
    "org.apache.hadoop" % "hadoop-client-api" % hadoopVersion,
    "org.apache.hadoop" % "hadoop-client-runtime" % hadoopVersion
  )

  val connectorTest: Seq[ModuleID] = Seq(
    "org.scalatest" %% "scalatest" % scalaTestVersion % Test
  )
}
