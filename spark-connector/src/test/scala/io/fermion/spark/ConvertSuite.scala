package io.fermion.spark

import io.fermion.core.scan.ReadAt
import io.fermion.core.schema.UnsupportedColumnTypeException
import io.fermion.spark.tools._
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

/** `fermion convert` on Spark: Parquet written by Spark (every type, nested, nulls, partitioned)
  * to Fermion and back, compared with the original file by file and row by row in order; types
  * Fermion rejects fail before anything is written; the progress line's format. */
class ConvertSuite extends AnyFunSuite with SparkSessionFixture {
  private val quiet = ProgressSettings.Quiet

  private def data(rows: Int): DataFrame = spark.range(rows).select(
    col("id"),
    when(col("id") % 7 === 0, lit(null)).otherwise(col("id") % 2 === 0).as("b"),
    (col("id") % 128).cast("tinyint").as("i8"),
    when(col("id") % 5 === 0, lit(null)).otherwise((col("id") * 7919).cast("int")).as("i32"),
    when(col("id") % 11 === 0, lit(Double.NaN)).otherwise(col("id") * -1.5).as("f64"),
    when(col("id") % 3 === 0, lit(null)).otherwise(concat(lit("s"), col("id").cast("string"))).as("s"),
    timestamp_micros(col("id") * 1000003L).as("ts"),
    timestamp_micros(col("id") * 7L).cast("timestamp_ntz").as("ts_ntz"),
    (col("id") / 100).cast("decimal(10,2)").as("dec"),
    (col("id") * 123456789L).cast("decimal(38,6)").as("wide"),
    when(col("id") % 4 === 0, lit(null)).otherwise(
      struct((col("id") % 10).as("x"), array(col("id").cast("string"), lit(null).cast("string")).as("tags"))
    ).as("st"),
    map(col("id").cast("string"), when(col("id") % 2 === 0, lit(null)).otherwise(col("id") * 2)).as("m"),
    (col("id") % 3).as("part")
  )

  /** Rows of each Parquet file under `path` (sorted by name), in file order. */
  private def filesInOrder(path: String): Seq[Seq[String]] = {
    val files = spark.read.parquet(path).inputFiles.sorted
    files.toSeq.map(f => spark.read.parquet(f).collect().toSeq.map(show))
  }

  private def show(r: Row): String = r.toSeq.map {
    case bytes: Array[Byte] => bytes.mkString("bin[", ",", "]")
    case other => String.valueOf(other)
  }.mkString("|")

  test("Parquet -> Fermion -> Parquet keeps schema, nulls, nested values and each file's row order") {
    val src = tempPath("parquet")
    data(6000).repartition(3).sortWithinPartitions(desc("id")).write.parquet(src)
    val fermion = tempPath("fermion")
    val r1 = FermionConvert.run(
      spark,
      FermionConvert.Request(source = Some(src), destination = Some(fermion), progress = quiet)
    )
    assert(r1.rows == 6000 && r1.inputFiles == 3 && r1.outputFiles == 3 && r1.version.contains(1L))
    val original = spark.read.parquet(src)
    val f = spark.read.format("fermion").load(fermion)
    assert(f.schema == original.schema)
    val back = tempPath("back")
    val r2 = FermionConvert.run(
      spark,
      FermionConvert.Request(source = Some(fermion), destination = Some(back), progress = quiet)
    )
    assert(r2.direction == "Fermion to Parquet" && r2.rows == 6000 && r2.outputFiles == 3)
    assert(spark.read.parquet(back).schema == original.schema)
    assert(filesInOrder(back) == filesInOrder(src))
  }

  test("partitioned directories: partition columns become columns, each file's rows stay in order") {
    val src = tempPath("parquet")
    data(3000).repartition(2).write.partitionBy("part").parquet(src)
    val fermion = tempPath("fermion")
    val r = FermionConvert.run(
      spark,
      FermionConvert.Request(source = Some(src), destination = Some(fermion), progress = quiet)
    )
    assert(r.inputFiles == 6 && r.rows == 3000)
    val original = spark.read.parquet(src)
    val f = spark.read.format("fermion").load(fermion)
    assert(f.schema == original.schema && f.schema.fieldNames.last == "part")
    val back = tempPath("back")
    FermionConvert.run(
      spark,
      FermionConvert.Request(source = Some(fermion), destination = Some(back), progress = quiet)
    )
    // Files sorted by path: part=0/..., part=1/..., part=2/...: the same order as the fragments.
    val perFile = spark.read.parquet(src).inputFiles.sorted.toSeq.map { file =>
      val part = "part=(\\d+)".r.findFirstMatchIn(file).get.group(1)
      spark.read.parquet(file).collect().toSeq.map(r => show(r) + "|" + part)
    }
    assert(filesInOrder(back) == perFile)
  }

  test("a Parquet table by name, and a Fermion dataset at an older version") {
    val src = tempPath("parquet")
    data(1000).write.parquet(src)
    spark.sql(s"CREATE TABLE convert_src USING parquet LOCATION '$src'")
    val fermion = tempPath("fermion")
    val r = FermionConvert.run(
      spark,
      FermionConvert.Request(table = Some("convert_src"), destination = Some(fermion), progress = quiet)
    )
    assert(r.rows == 1000 && r.inputFiles == spark.read.parquet(src).inputFiles.length)
    data(500).write.format("fermion").mode("append").save(fermion)
    val v1 = tempPath("v1")
    val r2 = FermionConvert.run(
      spark,
      FermionConvert.Request(source = Some(fermion), destination = Some(v1), at = ReadAt.Version(1), progress = quiet)
    )
    assert(r2.rows == 1000 && spark.read.parquet(v1).count() == 1000)
    assert(
      spark.read.parquet(v1).collect().map(show).sorted.toSeq == spark.read.parquet(src).collect().map(show).sorted.toSeq
    )
  }

  test("a type Fermion cannot store fails before anything is written, naming the column") {
    val src = tempPath("parquet")
    // A NULL-typed column can be written to Parquet; Fermion refuses it.
    spark.range(10).selectExpr("id", "null AS nothing").write.parquet(src)
    val dst = tempPath("fermion")
    val e = intercept[UnsupportedColumnTypeException](
      FermionConvert.run(spark, FermionConvert.Request(source = Some(src), destination = Some(dst), progress = quiet))
    )
    assert(e.getMessage.contains("`nothing`"))
    assert(!new java.io.File(dst).exists(), "nothing written")
  }

  test("in place: the dataset appears at the Parquet path in one commit; Parquet stays readable until deleted") {
    val src = tempPath("parquet")
    data(2000).repartition(2).write.partitionBy("part").parquet(src)
    val before = spark.read.parquet(src).collect().map(show).sorted.toSeq
    FermionConvert.run(spark, FermionConvert.Request(source = Some(src), inPlace = true, progress = quiet))
    assert(spark.read.parquet(src).collect().map(show).sorted.toSeq == before, "Parquet readers see the same table")
    assert(spark.read.format("fermion").load(src).collect().map(show).sorted.toSeq == before)
    assert(new java.io.File(src, "_fermion_data").isDirectory)
    val src2 = tempPath("parquet")
    data(2000).repartition(2).write.partitionBy("part").parquet(src2)
    FermionConvert.run(
      spark,
      FermionConvert.Request(source = Some(src2), inPlace = true, deleteSource = true, progress = quiet)
    )
    assert(spark.read.format("fermion").load(src2).collect().map(show).sorted.toSeq == before)
    assert(new java.io.File(src2).list().toSet == Set("_fermion_data", "_versions", "_transactions"))
  }

  test("the command line refuses a destination that is taken before it starts Spark") {
    val src = tempPath("parquet")
    data(100).write.parquet(src)
    val dst = tempPath("fermion")
    FermionConvert.run(spark, FermionConvert.Request(source = Some(src), destination = Some(dst), progress = quiet))
    val noSession = () => fail("a session was started for a conversion whose destination is taken")
    def refusal(args: String*) = ConvertDestination.refusalBeforeSpark(FermionCli.parseConvert(args)).map(_.getMessage)
    // the direction from the source's kind (Parquet: to Fermion), or as given
    assert(FermionCli.run(Seq("convert", "--quiet", src, dst), noSession) == 1)
    assert(refusal(src, dst).exists(_.contains(s"$dst already holds a Fermion dataset (version 1)")))
    assert(refusal("--to", "parquet", dst, src).exists(_.contains(s"$src exists and is not empty")))
    assert(FermionCli.run(Seq("convert", "--quiet", "--to", "parquet", dst, src), noSession) == 1)
    // free destinations, overwrite, in place and tables without a direction are left to the conversion
    assert(refusal(src, tempPath("free")).isEmpty && refusal("--to", "parquet", dst, tempPath("free")).isEmpty)
    assert(refusal("--mode", "overwrite", src, dst).isEmpty && refusal("--in-place", src).isEmpty)
    assert(refusal("--table", "some_table", dst).isEmpty)
  }

  test("destinations that exist are refused unless overwritten; write options pass through") {
    val src = tempPath("parquet")
    data(100).write.parquet(src)
    val dst = tempPath("fermion")
    val req = FermionConvert.Request(source = Some(src), destination = Some(dst), progress = quiet)
    FermionConvert.run(spark, req.copy(options = Map("stripeRows" -> "10", "compression" -> "none")))
    assert(intercept[IllegalArgumentException](FermionConvert.run(spark, req)).getMessage.contains("already holds"))
    val file = new java.io.File(dst, "data").listFiles().head.getPath
    val i = io.fermion.core.inspect.FileInspector.inspect(file, FermionTableSchema.hadoopConf())
    assert(i.numStripes == i.rows / 10 && i.columns.forall(_.streams.forall(_.codecs.keySet.subsetOf(Set("none")))))
    assert(intercept[IllegalArgumentException](FermionConvert.run(spark, req.copy(options = Map("compresion" -> "x"))))
      .getMessage.contains("compresion"))
    FermionConvert.run(spark, req.copy(overwrite = true))
    assert(spark.read.format("fermion").load(dst).count() == 100)
    // A destination overlapping the source is refused, even with overwrite.
    val same = req.copy(source = Some(dst), destination = Some(dst), overwrite = true)
    assert(intercept[IllegalArgumentException](FermionConvert.run(spark, same)).getMessage.contains("overlaps"))
    assert(spark.read.format("fermion").load(dst).count() == 100)
  }

  test("progress lines: files, bytes, share, rate, time left") {
    assert(
      ConvertProgress.format("files", 3, 8, 120L << 20, 480L << 20, 3.0) ==
        "[fermion convert] 3/8 files, 120.0 MiB of 480.0 MiB (25.0%), 40.0 MiB/s, 9.0 s left, 3.0 s elapsed"
    )
    assert(ConvertProgress.format("files", 0, 8, 0, 1000, 0.5).contains("rate unknown yet"))
    assert(ConvertProgress.format("files", 8, 8, 1000, 1000, 2.0).contains("(100.0%)") &&
      ConvertProgress.format("files", 8, 8, 1000, 1000, 2.0).contains("done"))
    assert(ConvertProgress.format(
      "tasks",
      2,
      4,
      -1,
      -1,
      10.0
    ) == "[fermion convert] 2/4 tasks, about 10.0 s left, 10.0 s elapsed")
    assert(ConvertProgress.duration(125) == "2m 05.0s")
    val out = new java.io.ByteArrayOutputStream()
    val src = tempPath("parquet")
    data(3000).repartition(3).write.parquet(src)
    val r = FermionConvert.run(
      spark,
      FermionConvert.Request(
        source = Some(src),
        destination = Some(tempPath("fermion")),
        progress = ProgressSettings(Some(new java.io.PrintStream(out, true)), 50)
      )
    )
    val lines = out.toString("UTF-8").linesIterator.toSeq
    assert(lines.nonEmpty && lines.forall(_.startsWith("[fermion convert] ")))
    assert(lines.last.startsWith("[fermion convert] 3/3 files") && lines.last.contains("(100.0%)"), lines.last)
    assert(r.summary.contains("rows:  3,000") && r.summary.contains("files: 3 -> 3"))
  }

  test("SQL: CONVERT TO FERMION / CONVERT TO PARQUET, other statements untouched") {
    import io.fermion.spark.extensions.ConvertSqlParser
    val parsed = ConvertSqlParser.parse(
      "convert to fermion parquet.`/a/b``c` TO '/d' OPTIONS (stripeRows = 100, 'compression' = 'none');"
    )
    assert(
      parsed.map(_.request.source).contains(Some("/a/b`c")) && parsed.map(_.request.destination).contains(Some("/d"))
    )
    assert(
      parsed.get.request.options == Map("stripeRows" -> "100", "compression" -> "none") && !parsed.get.request.inPlace
    )
    assert(ConvertSqlParser.parse("CONVERT TO FERMION parquet.`/x`").get.request.inPlace)
    assert(ConvertSqlParser.parse("CONVERT TO FERMION db.t TO '/y'").get.request.table.contains("db.t"))
    assert(ConvertSqlParser.parse("CONVERT TO PARQUET fermion.`/x` VERSION AS OF 3 TO '/y'").get.request.at == ReadAt
      .Version(3))
    assert(
      ConvertSqlParser.parse("SELECT 1").isEmpty && ConvertSqlParser.parse("CONVERT TO DELTA parquet.`/x`").isEmpty
    )
    assert(intercept[IllegalArgumentException](ConvertSqlParser.parse("CONVERT TO FERMION parquet.`/x` TO")).getMessage
      .contains("expected a quoted path"))

    val src = tempPath("parquet")
    data(500).write.parquet(src)
    val dst = tempPath("fermion")
    val row = spark.sql(s"CONVERT TO FERMION parquet.`$src` TO '$dst' OPTIONS (stripeRows = 100)").head()
    assert(row.getAs[Long]("rows") == 500 && row.getAs[Long]("version") == 1L)
    val back = tempPath("back")
    spark.sql(s"CONVERT TO PARQUET fermion.`$dst` VERSION AS OF 1 TO '$back'").collect()
    assert(
      spark.read.parquet(back).collect().map(show).sorted.toSeq == spark.read.parquet(src).collect().map(show).sorted.toSeq
    )
    assert(spark.sql("SELECT 1 AS one").head().getInt(0) == 1)
  }
}
