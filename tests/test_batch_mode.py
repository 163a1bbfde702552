"""Batch mode end to end: rows written with a `batchKey` become batches (never straddling a page),
`batch_id` / `index_in_batch` read back, lookups by key read only those batches, keys repeated
across tasks or already in the dataset are refused, and SQL tables take the key as a property."""
import pytest
from pyspark.sql import functions as F

from conftest import rows_of
from fermion_spark.dataset import FermionDataset


def samples(spark, start, end, partitions=1):
    """Rows of samples `start..end-1`, sample k having k % 9 + 1 frames."""
    return spark.range(start, end, 1, partitions).selectExpr(
        "id as sample", "explode(sequence(0, cast(id % 9 as int))) as frame") \
        .selectExpr("sample", "frame", "cast(sample * 100 + frame as double) as x",
                    "array(cast(frame as float), cast(sample as float)) as vec")


def test_batches_round_trip_and_lookups_read_only_their_pages(spark, tmp_table):
    path = tmp_table()
    df = samples(spark, 0, 3000)
    df.write.format("fermion").option("batchKey", "sample").option("pageRows", "64").save(path)
    t = spark.read.format("fermion").load(path)
    got = t.select("sample", "frame", "batch_id", "index_in_batch").collect()
    assert len(got) == df.count()
    assert all(r.batch_id == r.sample for r in got)
    by_batch = {}
    for r in got:
        by_batch.setdefault(r.batch_id, []).append(r.index_in_batch)
    assert all(sorted(v) == list(range(len(v))) and len(v) == k % 9 + 1 for k, v in by_batch.items())
    # lookups by key and by batch_id equal the same filters without pushdown
    plain = spark.read.format("fermion").option("filterPushdown", "false").load(path)
    for cond in ["sample = 1234", "sample IN (5, 17, 2999, 123456)", "sample BETWEEN 100 AND 105",
                 "batch_id = 42", "batch_id >= 2995", "sample = 7 AND frame > 3"]:
        q = t.where(cond).select("sample", "frame", "x", "vec", "index_in_batch")
        assert rows_of(q) == rows_of(plain.where(cond).select("sample", "frame", "x", "vec", "index_in_batch")), cond
        assert "Batches:" in q._jdf.queryExecution().executedPlan().toString(), cond
    # (one page per column and batch is checked on the files themselves by the core's BatchModeSuite)


def test_a_lookup_of_one_batch_runs_one_task(spark, tmp_table):
    path = tmp_table()
    # four tasks write four files of ascending keys, in stripes of at most 500 rows
    samples(spark, 0, 4000, partitions=4).write.format("fermion").option("batchKey", "sample") \
        .option("stripeRows", "500").save(path)
    # small splits, so that a scan by size makes many tasks
    spark.conf.set("spark.sql.files.maxPartitionBytes", "16384")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    try:
        t = spark.read.format("fermion").load(path)
        assert t.rdd.getNumPartitions() >= 4
        one = t.where("sample = 2345")
        assert one.rdd.getNumPartitions() == 1
        assert sorted(r.frame for r in one.collect()) == list(range(2345 % 9 + 1))
        # batches in two files: a task for each stripe that holds them, none for the other files
        two = t.where("sample IN (10, 3990)")
        assert two.rdd.getNumPartitions() == 2
        assert sorted((r.sample, r.frame) for r in two.collect()) == \
            sorted([(10, f) for f in range(10 % 9 + 1)] + [(3990, f) for f in range(3990 % 9 + 1)])
        assert t.where("sample = 123456").count() == 0
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")


def test_take_batches_in_order(spark, tmp_table):
    path = tmp_table()
    samples(spark, 0, 500).write.format("fermion").option("batchKey", "sample").save(path)
    got = FermionDataset(spark, path).take_batches([42, 7, 300], columns=["sample", "frame"]).collect()
    assert [(r.sample, r.index_in_batch) for r in got] == \
        [(42, i) for i in range(42 % 9 + 1)] + [(7, i) for i in range(7 % 9 + 1)] + [(300, i) for i in range(300 % 9 + 1)]


def test_repeated_keys_are_refused(spark, tmp_table):
    path = tmp_table()
    # the same key in two input partitions: the write clusters rows by the key, one batch per key
    grouped = tmp_table()
    spark.range(0, 100, 1, 2).selectExpr("id % 3 as k", "id").write.format("fermion").option("batchKey", "k").save(grouped)
    t = spark.read.format("fermion").load(grouped).select("k", "batch_id")
    assert sorted((r.k, r.n, r.ids) for r in t.groupBy("k").agg(F.count("*").alias("n"), F.countDistinct("batch_id").alias("ids")).collect()) \
        == [(0, 34, 1), (1, 33, 1), (2, 33, 1)]
    # a key already in the dataset
    samples(spark, 0, 10).write.format("fermion").option("batchKey", "sample").save(path)
    with pytest.raises(Exception, match="already a batch"):
        samples(spark, 9, 12).write.format("fermion").mode("append").save(path)  # batchKey kept by the dataset
    samples(spark, 10, 12).write.format("fermion").mode("append").save(path)
    assert spark.read.format("fermion").load(path).select("sample").distinct().count() == 12
    with pytest.raises(Exception, match="integral"):
        spark.range(3).selectExpr("cast(id as string) as s").write.format("fermion").option("batchKey", "s").save(path + "2")
    with pytest.raises(Exception, match="null"):
        spark.range(3).selectExpr("cast(null as bigint) as k").write.format("fermion").option("batchKey", "k").save(path + "3")


def test_deletes_and_compaction_keep_batches(spark, tmp_table):
    path = tmp_table()
    for i in range(4):
        samples(spark, i * 100, (i + 1) * 100).write.format("fermion").mode("append") \
            .option("batchKey", "sample").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("frame = 0 AND sample % 2 = 0")
    ds.compact(target_rows=100000)
    t = spark.read.format("fermion").load(path)
    plain = spark.read.format("fermion").option("filterPushdown", "false").load(path)
    for cond in ["sample = 150", "sample IN (1, 2, 399)"]:
        assert rows_of(t.where(cond).select("sample", "frame", "index_in_batch")) == \
            rows_of(plain.where(cond).select("sample", "frame", "index_in_batch"))
    # compaction renumbers the rows left of a batch from 0
    got = t.where("sample = 2").select("frame", "index_in_batch").orderBy("frame").collect()
    assert [(r.frame, r.index_in_batch) for r in got] == [(1, 0), (2, 1)]


def test_sql_table_with_a_batch_key(spark, tmp_table):
    path = tmp_table()
    spark.sql(f"CREATE TABLE bt (sample BIGINT, frame INT, x DOUBLE) USING fermion LOCATION '{path}' "
              "TBLPROPERTIES ('fermion.batchKey' = 'sample')")
    try:
        # VALUES are spread over the session's two cores: the write clusters them by the key.
        spark.sql("INSERT INTO bt VALUES (1, 0, 1.0), (1, 1, 2.0), (2, 0, 3.0)")
        got = spark.sql("SELECT sample, frame, batch_id, index_in_batch FROM bt WHERE sample = 1").collect()
        assert sorted((r.sample, r.batch_id, r.index_in_batch) for r in got) == [(1, 1, 0), (1, 1, 1)]
    finally:
        spark.sql("DROP TABLE bt")
