package io.fermion.spark

import org.apache.spark.sql.{DataFrame, Row, SaveMode}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

/** The DataSource through Spark: writes and reads compared with Parquet on the same data, save
  * modes, catalog tables, pruning and planning-time errors. */
class DataSourceSuite extends AnyFunSuite with SparkSessionFixture
    with org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper {

  private def allTypes(rows: Int): DataFrame = spark.range(rows).select(
    col("id"),
    when(col("id") % 7 === 0, lit(null)).otherwise(col("id") % 2 === 0).as("b"),
    (col("id") % 128).cast("tinyint").as("i8"),
    (col("id") * 31 % 30000).cast("smallint").as("i16"),
    when(col("id") % 5 === 0, lit(null)).otherwise((col("id") * 7919).cast("int")).as("i32"),
    (col("id") * 1000003L).as("i64"),
    (col("id") / 3.0).cast("float").as("f32"),
    when(col("id") % 11 === 0, lit(Double.NaN)).otherwise(col("id") * 1.5).as("f64"),
    when(col("id") % 3 === 0, lit(null)).otherwise(concat(lit("s"), col("id").cast("string"))).as("s"),
    col("id").cast("string").cast("binary").as("bin"),
    date_add(lit("2020-01-01").cast("date"), (col("id") % 1000).cast("int")).as("d"),
    timestamp_micros(col("id") * 1000003L).as("ts"),
    timestamp_micros(col("id") * 7L).cast("timestamp_ntz").as("ts_ntz"),
    (col("id") / 100).cast("decimal(10,2)").as("dec_small"),
    (col("id") * 123456789L).cast("decimal(38,6)").as("dec_wide")
  )

  private def withConf[T](key: String, value: String)(body: => T): T = {
    val before = spark.conf.getOption(key)
    spark.conf.set(key, value)
    try body
    finally before.fold(spark.conf.unset(key))(spark.conf.set(key, _))
  }

  private def sameRows(a: DataFrame, b: DataFrame): Unit = {
    def show(r: Row): String = r.toSeq.map {
      case bytes: Array[Byte] => bytes.mkString("bin[", ",", "]")
      case other => String.valueOf(other)
    }.mkString("|")
    val x = a.collect().map(show).sorted
    val y = b.collect().map(show).sorted
    assert(x.length == y.length)
    val diff = x.zip(y).filter { case (l, r) => l != r }.take(3)
    assert(diff.isEmpty, diff.mkString("\n"))
  }

  test("every flat type round-trips and matches Parquet") {
    val df = allTypes(20000).repartition(4)
    val f = tempPath("fermion"); val p = tempPath("parquet")
    df.write.format("fermion").option("stripeRows", "3000").save(f)
    df.write.parquet(p)
    val back = spark.read.format("fermion").load(f)
    assert(
      back.schema.fields.map(x => (x.name, x.dataType)).toSeq == df.schema.fields.map(x => (x.name, x.dataType)).toSeq
    )
    sameRows(back, spark.read.parquet(p))
    assert(back.where("i32 is null").count() == spark.read.parquet(p).where("i32 is null").count())
  }

  test("scans share one broadcast of the Hadoop configuration until its entries change") {
    def conf(extra: (String, String)*): SerializableHadoopConf = {
      val c = FermionTableSchema.hadoopConf()
      extra.foreach { case (k, v) => c.set(k, v) }
      new SerializableHadoopConf(c)
    }
    val first = SerializableHadoopConf.broadcast(conf())
    assert(SerializableHadoopConf.broadcast(conf()).id == first.id, "same entries, same broadcast")
    val changed = SerializableHadoopConf.broadcast(conf("fermion.test.setting" -> "1"))
    assert(changed.id != first.id, "a new entry, a new broadcast")
    assert(changed.value.value.get("fermion.test.setting") == "1")
    val again = SerializableHadoopConf.broadcast(conf("fermion.test.setting" -> "2"))
    assert(again.id != changed.id && again.value.value.get("fermion.test.setting") == "2", "a changed value")
    // A scan after a change reads with the configuration of the moment.
    val path = tempPath("fermion-conf")
    spark.range(10).write.format("fermion").save(path)
    assert(spark.read.format("fermion").load(path).count() == 10)
  }

  test("a scan repeated in one plan is reused (ReusedExchange); scans of different versions are not") {
    val path = tempPath("fermion-reuse")
    spark.range(100).selectExpr("id", "id % 10 as k").write.format("fermion").save(path)
    spark.range(100, 150).selectExpr("id", "id % 10 as k").write.format("fermion").mode("append").save(path)
    def counts(version: Option[Int]) = {
      val r = spark.read.format("fermion")
      version.fold(r)(v => r.option("versionAsOf", v.toLong)).load(path).groupBy("k").count()
    }
    val same = counts(None).as("a").join(counts(None).as("b"), "k")
    assert(same.collect().map(r => (r.getLong(1), r.getLong(2))).toSet == Set((15L, 15L)))
    assert(same.queryExecution.executedPlan.toString.contains("ReusedExchange"), same.queryExecution.executedPlan)
    val mixed = counts(Some(1)).as("a").join(counts(None).as("b"), "k")
    assert(mixed.collect().map(r => (r.getLong(1), r.getLong(2))).toSet == Set((10L, 15L)))
    assert(!mixed.queryExecution.executedPlan.toString.contains("ReusedExchange"), mixed.queryExecution.executedPlan)
  }

  test(
    "runtimeFilters: a join's keys (dynamic pruning) skip the stripes of sorted keys without them, not random keys"
  ) {
    val facts = tempPath("fermion-facts")
    val dims = tempPath("fermion-dims")
    spark.range(0, 200000, 1, 2).selectExpr("id AS k", "id % 7 AS m", "cast(id AS string) AS s")
      .write.format("fermion").option("stripeRows", "5000").save(facts)
    // 3,000 keys between 50,000 and 79,990: 1,000 with g = 1 (tested key by key), 2,000 with g < 2
    // (over 1,024: tested by their range); the facts holding them are in stripes 10 to 15 of 40.
    spark.range(0, 3000).selectExpr("id * 10 + 50000 AS k", "id % 3 AS g").write.format("fermion").save(dims)
    def readFacts(runtimeFilters: Boolean) =
      spark.read.format("fermion").option("runtimeFilters", runtimeFilters.toString)
        .load(facts).createOrReplaceTempView("dpp_facts")
    readFacts(runtimeFilters = true)
    spark.read.format("fermion").load(dims).createOrReplaceTempView("dpp_dims")
    def run(query: String, pruning: Boolean): (Seq[Row], String, Long) =
      withConf("spark.sql.optimizer.dynamicPartitionPruning.enabled", pruning.toString) {
        val df = spark.sql(query)
        val rows = df.collect().toSeq.sortBy(_.toString)
        val plan = df.queryExecution.executedPlan
        val read = collect(plan) {
          case b: org.apache.spark.sql.execution.datasources.v2.BatchScanExec
              if b.scan.description().contains("fermion-facts") => b.metrics("stripesRead").value
        }.sum
        (rows, plan.toString, read)
      }
    for (
      query <- Seq(
        "SELECT f.k, f.m, f.s FROM dpp_facts f JOIN dpp_dims d ON f.k = d.k WHERE d.g = 1",
        "SELECT f.m, count(*), sum(f.k) FROM dpp_facts f JOIN dpp_dims d ON f.k = d.k WHERE d.g < 2 GROUP BY f.m",
        "SELECT f.k FROM dpp_facts f LEFT SEMI JOIN (SELECT k FROM dpp_dims WHERE g = 2) d ON f.k = d.k"
      )
    ) {
      val (pruned, plan, read) = run(query, pruning = true)
      val (whole, _, readWhole) = run(query, pruning = false)
      assert(pruned == whole, query)
      assert(pruned.nonEmpty, query)
      assert(plan.contains("dynamicpruning"), plan)
      assert(readWhole == 40 && read == 6, s"$query: $read of $readWhole stripes read")
    }
    // Off by default.
    readFacts(runtimeFilters = false)
    val query = "SELECT f.k, f.m FROM dpp_facts f JOIN dpp_dims d ON f.k = d.k WHERE d.g = 1"
    assert(!run(query, pruning = true)._2.contains("dynamicpruning"))
    // Keys in random order: every stripe spans them all, a runtime filter would skip nothing.
    spark.range(0, 200000, 1, 2).selectExpr("id * 7919 % 200000 AS k", "id % 7 AS m", "cast(id AS string) AS s")
      .write.format("fermion").mode("overwrite").option("stripeRows", "5000").save(facts)
    readFacts(runtimeFilters = true)
    val (rows, plan, _) = run(query, pruning = true)
    assert(rows == run(query, pruning = false)._1 && rows.size == 1000)
    assert(!plan.contains("dynamicpruning"), plan)
  }

  test("filterEstimate: a join side whose filter keeps few rows is sized by them and broadcast") {
    val facts = tempPath("fermion-est-facts")
    val others = tempPath("fermion-est-others")
    // Keys in scrambled order (statistics rule nothing out): the filter's share comes from the sample.
    // Hashes, which do not compress, make the files' share of both sides larger than the threshold.
    spark.range(0, 200000, 1, 2)
      .selectExpr("id * 7919 % 200000 AS k", "id % 50 AS m", "sha2(cast(id AS string), 256) AS s")
      .write.format("fermion").option("stripeRows", "5000").save(facts)
    spark.range(0, 200000, 1, 2).selectExpr("id AS k", "id % 7 AS g", "sha2(cast(id AS string), 256) AS pad")
      .write.format("fermion").save(others)
    val query =
      "SELECT o.g, count(*), sum(f.k) FROM est_facts f JOIN est_others o ON f.k = o.k WHERE f.m = 3 GROUP BY o.g"
    def run(estimate: Boolean): (Seq[Row], String, BigInt) = {
      spark.read.format("fermion").option("filterEstimate", estimate.toString).load(facts)
        .createOrReplaceTempView("est_facts")
      spark.read.format("fermion").load(others).createOrReplaceTempView("est_others")
      withConf("spark.sql.autoBroadcastJoinThreshold", "1048576") {
        val df = spark.sql(query)
        val size = df.queryExecution.optimizedPlan.collectLeaves().collect {
          case r: org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation
              if r.scan.description().contains("fermion-est-facts") => r.stats.sizeInBytes
        }.head
        // The physical plan before adaptive execution: the planner's choice from the estimates.
        (df.collect().toSeq.sortBy(_.toString), df.queryExecution.sparkPlan.toString, size)
      }
    }
    val (rows, plan, size) = run(estimate = true)
    val (rowsWhole, planWhole, sizeWhole) = run(estimate = false)
    assert(rows == rowsWhole && rows.map(_.getLong(1)).sum == 4000)
    // The whole read (`k` and `m`): the files' bytes times Spark's row width read, (8 + 8 + 8) of
    // (8 + 8 + 8 + 20). Filtered: 1 in 50 of the 200,000 rows in memory, 8 bytes of overhead and 8 of
    // `k` each (the filter keeping so few is taken over exactly, so `m`, which only it reads, is not
    // read), give or take the sample's error.
    val fileBytes = new java.io.File(facts, "data").listFiles().filter(_.getName.endsWith(".fermion")).map(_.length).sum
    assert(
      math.abs(sizeWhole.toDouble - fileBytes * 24.0 / 44) <= 1 && sizeWhole > 1048576,
      s"$sizeWhole of $fileBytes"
    )
    val kept = 200000.0 / 50 * (8 + 8)
    assert(size.toDouble > kept * 0.9 && size.toDouble < kept * 1.1, s"$size, expected about $kept")
    assert(plan.contains("BroadcastHashJoin") && !plan.contains("SortMergeJoin"), plan)
    assert(planWhole.contains("SortMergeJoin") && !planWhole.contains("BroadcastHashJoin"), planWhole)
  }

  test("column pruning and filters") {
    val f = tempPath("fermion")
    allTypes(5000).write.format("fermion").save(f)
    val df = spark.read.format("fermion").load(f).select("s", "i64").where("i64 > 1000003000")
    assert(df.schema.fieldNames.toSeq == Seq("s", "i64"))
    assert(df.count() == allTypes(5000).where("i64 > 1000003000").count())
    val plan = df.queryExecution.executedPlan.toString
    assert(plan.contains("FermionScan") && (plan.contains("[s, i64]") || plan.contains("[i64, s]")), plan)
  }

  test("save modes") {
    val f = tempPath("fermion")
    val a = spark.range(10).toDF("x")
    a.write.format("fermion").save(f) // default ErrorIfExists on a new path
    val e = intercept[Exception](a.write.format("fermion").save(f))
    assert(e.getMessage.toLowerCase.contains("already exists"), e.getMessage)
    a.write.format("fermion").mode(SaveMode.Ignore).save(f)
    assert(spark.read.format("fermion").load(f).count() == 10)
    a.write.format("fermion").mode(SaveMode.Append).save(f)
    assert(spark.read.format("fermion").load(f).count() == 20)
    spark.range(3).toDF("x").write.format("fermion").mode(SaveMode.Overwrite).save(f)
    assert(spark.read.format("fermion").load(f).collect().map(_.getLong(0)).sorted.toSeq == Seq(0L, 1L, 2L))
    val bad = intercept[Exception](spark.range(3).toDF("y").write.format("fermion").mode("append").save(f))
    assert(bad.getMessage.contains("Cannot append"), bad.getMessage)
  }

  test("CREATE TABLE ... USING fermion LOCATION, INSERT INTO, SELECT") {
    val f = tempPath("fermion")
    spark.sql(s"CREATE TABLE sql_t (id INT, name STRING, amount DECIMAL(12,2)) USING fermion LOCATION '$f'")
    try {
      spark.sql("INSERT INTO sql_t VALUES (1, 'a', 1.50), (2, null, null)")
      spark.sql("INSERT INTO sql_t SELECT 3, 'c', 3.25")
      val rows = spark.sql("SELECT id, name, amount FROM sql_t ORDER BY id").collect().toSeq
      assert(rows == Seq(
        Row(1, "a", new java.math.BigDecimal("1.50")),
        Row(2, null, null),
        Row(3, "c", new java.math.BigDecimal("3.25"))
      ))
      assert(spark.read.format("fermion").load(f).count() == 3)
    } finally spark.sql("DROP TABLE sql_t")
  }

  test("planning-time errors: unknown option, bad value, unsupported type, missing path") {
    val f = tempPath("fermion")
    val e1 =
      intercept[IllegalArgumentException](spark.range(1).write.format("fermion").option("compresion", "zstd").save(f))
    assert(e1.getMessage.contains("compresion"))
    val e2 =
      intercept[IllegalArgumentException](spark.range(1).write.format("fermion").option("pageSize", "huge").save(f))
    assert(e2.getMessage.contains("pageSize"))
    val e3 = intercept[IllegalArgumentException](
      spark.range(1).selectExpr("struct(parse_json('1') as v) as st").write.format("fermion").save(f)
    )
    assert(e3.getMessage.contains("`st.v`"), e3.getMessage)
    val e3b = intercept[Exception](spark.range(1).selectExpr("make_interval(1) as iv").write.format("fermion").save(f))
    assert(e3b.getMessage.contains("iv") || e3b.getMessage.toLowerCase.contains("interval"), e3b.getMessage)
    val e4 = intercept[Exception](spark.read.format("fermion").load(f + "-missing").collect())
    assert(e4.getMessage.contains("does not exist"), e4.getMessage)
    spark.range(1).write.format("fermion").save(f)
    val e5 =
      intercept[IllegalArgumentException](spark.read.format("fermion").option("tailPrefetch", "1").load(f).collect())
    assert(e5.getMessage.contains("tailPrefetch"))
    assert(new java.io.File(f + "/_versions").list().count(_.endsWith(".manifest")) == 1)
  }

  test("a failing job leaves no visible output") {
    val f = tempPath("fermion")
    spark.range(5).toDF("x").write.format("fermion").save(f)
    val before = new java.io.File(f + "/data").list().toSet
    val boom = udf((x: Long) => if (x == 7777) throw new RuntimeException("boom") else x)
    intercept[Exception](
      spark.range(0, 10000, 1, 4).select(boom(col("id")).as("x")).write.format("fermion").mode("append").save(f)
    )
    assert(spark.read.format("fermion").load(f).count() == 5)
    assert(
      new java.io.File(f + "/_versions").list().count(_.endsWith(".manifest")) == 1,
      "the failed job committed no version"
    )
    val files = new java.io.File(f + "/data").list().toSeq
    assert(files.toSet == before, s"the failed job's task files were deleted on abort: $files")
  }

  test("nested columns round-trip and match Parquet; nested pruning reaches the scan") {
    val df = spark.range(3000).selectExpr(
      "id",
      "if(id % 5 = 0, null, named_struct('a', id, 'b', cast(id as string), 'inner', named_struct('x', id * 2, 'y', array(id, null)))) as st",
      "if(id % 7 = 0, null, sequence(0, id % 4)) as arr",
      "array(array(id), array(), null) as nested_arr",
      "if(id % 3 = 0, map('k', cast(id as double)), map('a', null, 'b', 1.5D)) as m",
      "array(named_struct('p', id, 'q', 'q')) as arr_of_struct"
    )
    val f = tempPath("fermion"); val p = tempPath("parquet")
    df.write.format("fermion").option("stripeRows", "500").save(f)
    df.write.parquet(p)
    val back = spark.read.format("fermion").load(f)
    assert(back.schema.catalogString == spark.read.parquet(p).schema.catalogString)
    sameRows(back, spark.read.parquet(p))
    val pruned = back.select("st.inner.x", "arr_of_struct.p")
    val scan = pruned.queryExecution.executedPlan.collectFirst {
      case s: org.apache.spark.sql.execution.datasources.v2.BatchScanExec => s
    }.get
    val readSchema = scan.scan.readSchema()
    assert(readSchema.fieldNames.toSeq.sorted == Seq("arr_of_struct", "st"))
    assert(readSchema("st").dataType.simpleString == "struct<inner:struct<x:bigint>>", readSchema.treeString)
    assert(readSchema("arr_of_struct").dataType.simpleString == "array<struct<p:bigint>>", readSchema.treeString)
    sameRows(pruned, spark.read.parquet(p).select("st.inner.x", "arr_of_struct.p"))
  }

  test("predicates skip stripes by statistics (metrics) and never change results") {
    val f = tempPath("fermion")
    spark.range(0, 200000, 1, 2).selectExpr("id", "cast(id as string) as s", "id % 7 as m")
      .write.format("fermion").option("stripeRows", "5000").save(f)
    def run(filter: String, pushdown: Boolean): (Seq[Long], Long, Long) = {
      val df =
        spark.read.format("fermion").option("filterPushdown", pushdown.toString).load(f).where(filter).select("id")
      val ids = df.collect().map(_.getLong(0)).toSeq.sorted
      val scan = df.queryExecution.executedPlan.collectFirst {
        case b: org.apache.spark.sql.execution.datasources.v2.BatchScanExec => b
      }.get
      (ids, scan.metrics("stripesSkipped").value, scan.metrics("stripesRead").value)
    }
    for (
      filter <- Seq(
        "id = 123456",
        "id between 1000 and 1999",
        "id > 190000 or id < 50",
        "s = '77777'",
        "not (id >= 10)",
        "m = 3 and id < 20000",
        "id in (5, 150000)",
        "s like '19999%'"
      )
    ) {
      val (on, skipped, read) = run(filter, pushdown = true)
      val (off, skippedOff, readOff) = run(filter, pushdown = false)
      assert(on == off, filter)
      assert(skippedOff == 0 && readOff == 40, filter)
      assert(skipped + read == 40, filter)
    }
    assert(run("id = 123456", pushdown = true)._2 == 39)
    val explained = spark.read.format("fermion").load(f).where("id = 5")
      .queryExecution.executedPlan.toString
    assert(explained.contains("StripeFilter"), explained)
  }

  test("write batches of wide rows stay within the batch budget; narrow rows keep full batches") {
    import org.apache.spark.sql.types.{DoubleType, StructField, StructType}
    def wide(n: Int) = StructType((0 until n).map(i => StructField(s"c$i", DoubleType)))
    val budget = io.fermion.spark.write.FermionDataWriter.BatchBytes
    Seq(10, 1000, 100000, 3000000).foreach { n =>
      val rows = io.fermion.spark.write.FermionDataWriter.batchRowsFor(wide(n))
      assert(rows >= 1 && (rows == 1 || rows.toLong * wide(n).defaultSize <= budget), s"$n columns: $rows rows")
    }
    assert(
      io.fermion.spark.write.FermionDataWriter.batchRowsFor(wide(10)) == io.fermion.spark.write.FermionDataWriter.BatchRows
    )
    // A table wider than one batch of the default size round-trips.
    val df = spark.range(50).select((0 until 3000).map(i => (col("id") * (i + 1)).cast("double").as(s"c$i")): _*)
    val f = java.nio.file.Files.createTempDirectory("fermion-wide-write").resolve("t").toString
    df.write.format("fermion").save(f)
    val back = spark.read.format("fermion").load(f)
    assert(back.select("c2999").collect().map(_.getDouble(0)).sorted.toSeq == (0 until 50).map(_ * 3000.0))
  }
}
