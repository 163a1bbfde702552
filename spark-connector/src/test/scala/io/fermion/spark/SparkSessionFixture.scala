package io.fermion.spark

import java.nio.file.Files

import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/** A local SparkSession shared by a suite, with the connector on the test classpath. */
trait SparkSessionFixture extends BeforeAndAfterAll { self: Suite =>
  @transient lazy val spark: SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName(getClass.getSimpleName)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.warehouse.dir", Files.createTempDirectory("fermion-warehouse").toString)
    .getOrCreate()

  def tempPath(prefix: String): String = Files.createTempDirectory(prefix).resolve("t").toString

  override def afterAll(): Unit = {
    try spark.stop()
    finally super.afterAll()
  }
}
