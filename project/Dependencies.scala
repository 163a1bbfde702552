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
    // A real HDFS (NameNode + DataNode in the test JVM) for the commit-protocol suites: the shaded
    // minicluster matches hadoop-client-api/runtime, so nothing on the test class path clashes.
    "org.apache.hadoop" % "hadoop-client-minicluster" % hadoopVersion % Test,
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

  /** The AWS SDK v2 release hadoop-aws 3.5.0 is built against (`aws-java-sdk-v2.version` in
    * hadoop-project 3.5.0; it depends on the ~600 MB `bundle`, which these slim modules replace). */
  val awsSdkVersion = "2.35.4"

  /** hadoop-aws and the slim AWS SDK v2 modules S3A needs, without the libraries `excluded`. */
  private def s3a(excluded: Seq[ExclusionRule]): Seq[ModuleID] = Seq(
    ("org.apache.hadoop" % "hadoop-aws" % hadoopVersion).intransitive(),
    "software.amazon.awssdk" % "s3" % awsSdkVersion excludeAll (excluded: _*),
    "software.amazon.awssdk" % "sts" % awsSdkVersion excludeAll (excluded: _*),
    "software.amazon.awssdk" % "s3-transfer-manager" % awsSdkVersion excludeAll (excluded: _*),
    "software.amazon.awssdk" % "apache-client" % awsSdkVersion excludeAll (excluded: _*),
    "software.amazon.awssdk" % "netty-nio-client" % awsSdkVersion excludeAll (excluded: _*),
    "software.amazon.s3.analyticsaccelerator" % "analyticsaccelerator-s3" % "1.3.1" excludeAll (excluded: _*)
  )

  /** S3A for the end-to-end tests against a local S3 server: never a dependency of the jar we
    * ship (users bring hadoop-aws, as for Parquet on S3). What Spark already ships (Netty, Apache
    * HttpClient, SLF4J, commons-*) is left out so that one copy of each is on the class path. */
  val s3aTestJars: Seq[ModuleID] = s3a(
    Seq(
      ExclusionRule("io.netty"),
      ExclusionRule("org.apache.httpcomponents"),
      ExclusionRule("org.slf4j"),
      ExclusionRule("commons-codec"),
      ExclusionRule("commons-logging")
    )
  )

  /** S3A in core's tests (the commit-protocol suite against the local S3 server), where no Spark
    * supplies HTTP clients, Netty or commons-lang3 (hadoop-aws uses it; Spark 4.3.0 ships 3.20.0). */
  val coreS3aTest: Seq[ModuleID] =
    (s3a(Seq.empty) :+ "org.apache.commons" % "commons-lang3" % "3.20.0").map(_ % Test)

  val connectorTest: Seq[ModuleID] = Seq(
    "org.scalatest" %% "scalatest" % scalaTestVersion % Test
  )
}
