"""Many files and partitions, save modes, catalog tables, pruning."""
import os
import shutil

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from conftest import assert_same_as_parquet, rows_of
from fermion_spark.dataset import FermionDataset


def data_files(path):
    """The data files of a dataset (under data/; a manifest decides which belong to a version)."""
    return sorted(n for n in os.listdir(os.path.join(path, "data")) if n.endswith(".fermion"))


def test_many_tasks_files_and_input_partitions(spark, tmp_table):
    df = spark.range(0, 200_000, 1, 16).select(
        "id", (F.col("id") % 1000).alias("k"), F.concat(F.lit("row-"), F.col("id").cast("string")).alias("s"))
    f = tmp_table("f")
    assert_same_as_parquet(spark, df, f, tmp_table("p"), stripeRows="2000")
    assert len(data_files(f)) == 16
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(8 << 10))  # files are a few stripes of ~10 KB
    try:
        back = spark.read.format("fermion").load(f)
        assert back.rdd.getNumPartitions() > 16  # files are split by stripe ranges
        assert back.agg(F.sum("id"), F.countDistinct("s")).collect()[0] == (sum(range(200_000)), 200_000)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_save_modes(spark, tmp_table):
    path = tmp_table()
    spark.range(10).write.format("fermion").save(path)  # errorifexists on a new path
    with pytest.raises(Exception, match="(?i)already exists"):
        spark.range(10).write.format("fermion").save(path)
    with pytest.raises(Exception, match="(?i)already exists"):
        spark.range(10).write.format("fermion").mode("error").save(path)
    spark.range(100).write.format("fermion").mode("ignore").save(path)
    assert spark.read.format("fermion").load(path).count() == 10
    spark.range(10, 15).write.format("fermion").mode("append").save(path)
    assert spark.read.format("fermion").load(path).count() == 15
    spark.range(3).write.format("fermion").mode("overwrite").save(path)
    assert sorted(r.id for r in spark.read.format("fermion").load(path).collect()) == [0, 1, 2]
    spark.range(3).selectExpr("cast(id as string) as s").write.format("fermion").mode("overwrite").save(path)
    assert spark.read.format("fermion").load(path).columns == ["s"]
    fresh = tmp_table("ignore-new")
    spark.range(4).write.format("fermion").mode("ignore").save(fresh)
    assert spark.read.format("fermion").load(fresh).count() == 4


def test_append_with_other_columns_is_rejected(spark, tmp_table):
    path = tmp_table()
    spark.range(3).write.format("fermion").save(path)
    with pytest.raises(Exception, match="Cannot append"):
        spark.range(3).selectExpr("id as other").write.format("fermion").mode("append").save(path)
    spark.range(3).selectExpr("id * 2 as id").write.format("fermion").mode("append").save(path)
    assert spark.read.format("fermion").load(path).count() == 6


def test_sql_catalog_table(spark, tmp_table):
    path = tmp_table("sql")
    spark.sql(f"CREATE TABLE feats (id BIGINT, label INT, name STRING, ts TIMESTAMP) USING fermion LOCATION '{path}'")
    try:
        spark.sql("INSERT INTO feats VALUES (1, 1, 'a', TIMESTAMP'2026-01-02 03:04:05'), (2, 0, NULL, NULL)")
        spark.sql("INSERT INTO feats SELECT id + 10, cast(id % 2 as int), cast(id as string), NULL FROM range(5)")
        assert spark.sql("SELECT count(*) FROM feats").collect()[0][0] == 7
        assert spark.sql("SELECT name FROM feats WHERE id = 1").collect()[0][0] == "a"
        assert spark.sql("SELECT sum(label) FROM feats").collect()[0][0] == 3
        assert spark.read.format("fermion").load(path).count() == 7
    finally:
        spark.sql("DROP TABLE feats")
    spark.sql(f"CREATE TABLE feats2 USING fermion LOCATION '{path}'")  # schema from the files
    try:
        assert spark.table("feats2").columns == ["id", "label", "name", "ts"]
        assert spark.table("feats2").count() == 7
    finally:
        spark.sql("DROP TABLE feats2")


def test_column_pruning_reaches_the_scan(spark, tmp_table):
    path = tmp_table()
    spark.range(1000).selectExpr("id", "id * 2 as a", "cast(id as string) as b", "id % 3 as c").write.format("fermion").save(path)
    df = spark.read.format("fermion").load(path).select("b", "c").where("c = 1")
    plan = df._jdf.queryExecution().executedPlan().toString()
    scan = [line for line in plan.splitlines() if "FermionScan" in line]
    assert scan, plan
    desc = scan[0].split("FermionScan")[1]
    assert sorted(desc[desc.index("[") + 1:desc.index("]")].split(", ")) == ["b", "c"], plan
    assert df.count() == 333


def test_count_reads_no_columns(spark, tmp_table):
    path = tmp_table()
    spark.range(12345).write.format("fermion").option("stripeRows", "1000").save(path)
    assert spark.read.format("fermion").load(path).count() == 12345


def test_small_tables_are_broadcast_in_joins(spark, tmp_table):
    small, big = tmp_table("small"), tmp_table("big")
    spark.range(100).selectExpr("id", "cast(id as string) as name").write.format("fermion").save(small)
    spark.range(200000).selectExpr("id % 100 as id", "id as v").write.format("fermion").save(big)
    joined = spark.read.format("fermion").load(big).join(spark.read.format("fermion").load(small), "id")
    assert joined.count() == 200000
    plan = joined._jdf.queryExecution().executedPlan().toString()
    assert "BroadcastHashJoin" in plan or "BroadcastExchange" in plan, plan


def test_scan_size_estimate_is_the_smaller_of_the_files_share_and_the_rows_in_memory(spark, tmp_table):
    # What the planner compares with the broadcast threshold: the smaller of Spark's estimate for its
    # file sources (the files' bytes, deleted rows deducted in proportion, times the share of Spark's
    # default row width read, times spark.sql.sources.fileCompressionFactor) and the live rows in
    # memory: 8 bytes of row overhead plus each read column's size as the manifest records it
    # (validity bits, 4-byte lengths and the values, as Arrow holds them).
    path = tmp_table("est")
    n = 50000
    spark.range(n).selectExpr("id as k", "cast(id * 7 as string) as s", "cast(id as double) as x",
                              "cast(id % 9 as int) as i").coalesce(1).write.format("fermion").save(path)
    assert len(data_files(path)) == 1  # one file of one stripe: one validity bitmap per column
    [name] = data_files(path)
    length = os.path.getsize(os.path.join(path, "data", name))
    spark.sql(f"DELETE FROM fermion.`{path}` WHERE k % 10 = 3")
    live = n - n // 10
    bits = (n + 7) // 8
    stored = {"k": bits + 8 * n, "x": bits + 8 * n, "i": bits + 4 * n,
              "s": bits + 4 * n + sum(len(str(v * 7)) for v in range(n))}
    width = {"k": 8, "s": 20, "x": 8, "i": 4}  # Spark's default sizes

    def size(cols):
        plan = spark.read.format("fermion").load(path).select(*cols)._jdf.queryExecution().optimizedPlan()
        return int(str(plan.collectLeaves().head().stats().sizeInBytes()))  # the scan relation

    previous = spark.conf.get("spark.sql.sources.fileCompressionFactor")
    try:
        for factor in (1.0, 1000.0):
            spark.conf.set("spark.sql.sources.fileCompressionFactor", str(factor))
            for cols in (["k"], ["k", "s"], ["s", "x", "i"], ["k", "s", "x", "i"]):
                files = factor * (length * live / n) * ((8 + sum(width[c] for c in cols)) / (8 + sum(width.values())))
                in_memory = live * 8 + sum(stored[c] * live // n for c in cols)
                # Compressed, the files are the smaller; a factor of 1000 makes them the larger.
                assert (files < in_memory) == (factor == 1.0), (cols, files, in_memory)
                assert abs(size(cols) - min(files, in_memory)) <= 1, (cols, factor)
    finally:
        spark.conf.set("spark.sql.sources.fileCompressionFactor", previous)


def test_scan_size_estimate_counts_the_column_files_added_to_fragments(spark, tmp_table):
    # Columns added from expressions are written as column files beside the data files: their bytes
    # are part of what a scan of those columns reads, as Spark's file sources count every file.
    path = tmp_table("est_added")
    spark.range(20000).selectExpr("id AS k").coalesce(1).write.format("fermion").save(path)
    FermionDataset(spark, path).add_columns_from({"h": "sha2(cast(k AS string), 256)"})
    names = data_files(path)
    assert len(names) == 2  # the data file and its column file
    total = sum(os.path.getsize(os.path.join(path, "data", n)) for n in names)
    plan = spark.read.format("fermion").load(path).select("k", "h")._jdf.queryExecution().optimizedPlan()
    size = int(str(plan.collectLeaves().head().stats().sizeInBytes()))
    assert size == total, (size, total, names)  # every column read: the whole row width


def test_scan_size_estimate_of_loose_files_is_their_bytes_share(spark, tmp_table):
    # Loose files (no manifest) have neither row counts nor column sizes without opening them:
    # their bytes times the share of Spark's row width the scan reads.
    path = tmp_table("loose")
    spark.range(20000).selectExpr("id as k", "cast(id as string) as s").coalesce(1).write.format("fermion").save(path)
    [name] = data_files(path)
    f = os.path.join(path, "data", name)
    loose = tmp_table("loose_dir")
    os.makedirs(loose, exist_ok=True)
    shutil.copy(f, os.path.join(loose, os.path.basename(f)))
    plan = spark.read.format("fermion").load(loose).select("k")._jdf.queryExecution().optimizedPlan()
    size = int(str(plan.collectLeaves().head().stats().sizeInBytes()))
    assert size == int(os.path.getsize(f) * (8 + 8) / (8 + 8 + 20))


def test_small_files_are_packed_into_fewer_partitions(spark, tmp_table):
    path = tmp_table("many")
    spark.range(0, 6000, 1, 60).write.format("fermion").save(path)
    assert len(data_files(path)) == 60
    df = spark.read.format("fermion").load(path)
    assert df.rdd.getNumPartitions() < 60
    assert sorted(r.id for r in df.collect()) == list(range(6000))
