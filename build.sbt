// Fermion: a columnar file format and table format for wide, nested tables, as a Spark DSv2 plugin.
//
// Spark 4.3.0 is published on PyPI (PySpark 4.3.0) but not on Maven Central, so the connector
// compiles and tests against the jars inside the pinned PySpark (dev/sbt exports their folder as
// FERMION_SPARK_JARS). Those jars are Provided: they never enter the assembly.

ThisBuild / organization := "io.fermion"
ThisBuild / version := "0.1.0"
ThisBuild / scalaVersion := "2.13.18"
ThisBuild / javacOptions ++= Seq("--release", "17")
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked")

/** The JDK 17 module openings Spark and Arrow need (the list spark-submit itself passes). */
val jdk17Opens = Seq(
  "java.base/java.lang",
  "java.base/java.lang.invoke",
  "java.base/java.lang.reflect",
  "java.base/java.io",
  "java.base/java.net",
  "java.base/java.nio",
  "java.base/java.util",
  "java.base/java.util.concurrent",
  "java.base/java.util.concurrent.atomic",
  "java.base/jdk.internal.ref",
  "java.base/sun.nio.ch",
  "java.base/sun.nio.cs",
  "java.base/sun.security.action",
  "java.base/sun.util.calendar"
).map(p => s"--add-opens=$p=ALL-UNNAMED")

// The suites' forked JVMs use the parallel collector: `sbt test` alone took 380 and 394 s (576 and
// 594 CPU-seconds) with it, against 397, 400 and 403 s (611, 617 and 611 CPU-seconds) with G1.
lazy val testSettings = Seq(
  Test / fork := true,
  Test / javaOptions ++= jdk17Opens ++ Seq(
    "-Xmx3g",
    "-XX:+UseParallelGC",
    "-Dio.netty.tryReflectionSetAccessible=true"
  ),
  Test / parallelExecution := false,
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
)

lazy val sparkJars = settingKey[Seq[File]]("Spark 4.3.0 jars from the pinned PySpark")

lazy val core = (project in file("core"))
  .settings(
    name := "fermion-core",
    libraryDependencies ++= Dependencies.core ++ Dependencies.coreS3aTest,
    testSettings,
    // Programs in the test sources (dev/fuzz, dev/soak, dev/compat-corpus) run in their own JVM,
    // which starts child JVMs on the same class path.
    Test / run / fork := true,
    Test / run / javaOptions ++= jdk17Opens ++ Seq("-Xmx2g", "-Dio.netty.tryReflectionSetAccessible=true"),
    Test / run / baseDirectory := (ThisBuild / baseDirectory).value
  )

lazy val sparkConnector = (project in file("spark-connector"))
  .dependsOn(core % "compile->compile;test->test")
  .settings(
    name := "fermion-spark",
    sparkJars := {
      val dir = sys.env.get("FERMION_SPARK_JARS").map(file)
      dir match {
        case Some(d) if d.isDirectory => (d * "*.jar").get.sortBy(_.getName)
        case _ =>
          sys.error("FERMION_SPARK_JARS does not name the jars/ folder of PySpark 4.3.0; run the build through dev/sbt")
      }
    },
    Compile / unmanagedJars ++= sparkJars.value.map(Attributed.blank),
    libraryDependencies ++= Dependencies.connectorTest,
    testSettings,
    // Most of Spark's code runs here only briefly, and compiling it with C2 costs CPU it does not
    // win back: with C1 alone in this JVM `sbt test` took 377 and 402 s (541 and 589 CPU-seconds)
    // against 380 and 394 s (576 and 594) without (DataSourceSuite 44.8 -> 37.8 s in the first
    // pair). The core suites keep C2: their property tests decode millions of values (with C1
    // alone there too, ArrowValuesSuite took 49.2 s against 11.6).
    Test / javaOptions += "-XX:TieredStopAtLevel=1",
    assembly / assemblyJarName := s"fermion-spark-assembly_2.13-${version.value}.jar",
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    // Everything Spark provides stays out of the jar: the PySpark jars and core's Provided deps.
    assembly / assemblyExcludedJars := {
      val provided = sparkJars.value.map(_.getName).toSet
      (assembly / fullClasspath).value.filter(j => provided.contains(j.data.getName))
    },
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", _*) => MergeStrategy.discard
      case _ => MergeStrategy.first
    }
  )

/** Stand-alone JVM benchmarks of the core (Spark-level benchmarks are Python scripts beside them). */
lazy val benchmarks = (project in file("benchmarks"))
  .dependsOn(core)
  .settings(
    name := "fermion-benchmarks",
    publish / skip := true,
    libraryDependencies ++= Dependencies.benchmarks,
    run / fork := true,
    run / javaOptions ++= jdk17Opens ++ Seq("-Xmx4g", "-Dio.netty.tryReflectionSetAccessible=true"),
    run / baseDirectory := (ThisBuild / baseDirectory).value
  )

/** Not part of the product: resolves hadoop-aws and the slim AWS SDK modules from Maven Central so
  * that the end-to-end tests can reach a local S3 server through S3A (`dev/s3a-jars` writes the
  * list of jars that the PySpark test session adds to `spark.jars`). */
lazy val s3aTestJars = (project in file("tests/s3a-jars"))
  .settings(
    name := "fermion-s3a-test-jars",
    publish / skip := true,
    crossPaths := false,
    autoScalaLibrary := false,
    libraryDependencies ++= Dependencies.s3aTestJars
  )

lazy val root = (project in file("."))
  .aggregate(core, sparkConnector, benchmarks)
  .settings(
    name := "fermion",
    publish / skip := true,
    assembly / aggregate := false
  )
