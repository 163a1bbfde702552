"""Partitioned datasets, side by side with Parquet tables doing the same operations (or, where
Parquet has no such behaviour, with Delta's documented one): `partitionBy` and `PARTITIONED BY`,
partition values kept in the manifest (no `k=v/` directories), partition pruning visible in
EXPLAIN and in the scan's metrics, `INSERT OVERWRITE` of static and dynamic partitions,
`replaceWhere`, and Hive-style directories of loose Fermion files."""
import glob
import os
import re
import shutil

import pytest

from conftest import batch_scans, error_of, rows_of


def sample(spark, start=0, end=40):
    """Rows over three partitions of `k` plus a null partition, and a date partition column."""
    return spark.range(start, end).selectExpr(
        "id",
        "concat('v', id) AS v",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 3 AS INT) END AS k",
        "date_add(DATE'2026-01-01', CAST(id % 2 AS INT)) AS d",
    )


def same_rows(a, b, cols=("id", "v", "k", "d")):
    """Row sets equal, columns compared by name (Parquet moves partition columns last)."""
    assert rows_of(a.select(*cols)) == rows_of(b.select(*cols))


def fermion_files(path):
    return glob.glob(os.path.join(path, "**", "*.fermion"), recursive=True)


def explain(df):
    return df._jdf.queryExecution().executedPlan().toString()


def pruning(df):
    """(kept, all) fragments of the scan's partition pruning, from EXPLAIN."""
    m = re.search(r"PartitionPruning: (\d+) of (\d+) fragments", explain(df))
    assert m, explain(df)
    return int(m.group(1)), int(m.group(2))


def driver_metric(df, name):
    """A scan metric's value in the executed plan of `df` (run first)."""
    plan = df._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    for i in range(leaves.size()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains(name):
            return metrics.apply(name).value()
    raise AssertionError(f"no metric {name} in {plan}")


def test_partition_by_writes_values_to_the_manifest_and_reads_like_parquet(spark, tmp_table):
    f, p = tmp_table("f"), tmp_table("p")
    df = sample(spark)
    df.write.format("fermion").partitionBy("k", "d").save(f)
    df.write.partitionBy("k", "d").parquet(p)
    same_rows(spark.read.format("fermion").load(f), spark.read.parquet(p))
    # No k=v/ directories: every data file sits in data/ and holds the data columns only.
    assert not [d for d in os.listdir(f) if "=" in d]
    files = fermion_files(f)
    assert files and all(os.path.dirname(x) == os.path.join(f, "data") for x in files)
    one = spark.read.format("fermion").load(files[0])
    assert sorted(one.columns) == ["id", "v"]
    # One fragment per partition (7 values of k incl. null x 2 dates, fewer tasks' worth at most).
    table = spark.read.format("fermion").load(f)
    assert len(files) >= table.select("k", "d").distinct().count()
    # Appends without partitionBy keep the partitioning; with another one they fail.
    sample(spark, 40, 50).write.format("fermion").mode("append").save(f)
    sample(spark, 40, 50).write.mode("append").partitionBy("k", "d").parquet(p)
    same_rows(spark.read.format("fermion").load(f), spark.read.parquet(p))
    assert "partitioning" in error_of(
        lambda: sample(spark, 50, 51).write.format("fermion").mode("append").partitionBy("v").save(f)
    )


@pytest.mark.parametrize("predicate", [
    "k = 1",
    "k IN (0, 2)",
    "k IS NULL",
    "k IS NOT NULL AND id > 20",
    "NOT (k = 1)",
    "k = 1 OR id < 3",
    "d = DATE'2026-01-02' AND k > 0",
    "k <=> 2",
    "v = 'v5'",
])
def test_filters_on_partition_columns_match_parquet(spark, tmp_table, predicate):
    f, p = tmp_table("f"), tmp_table("p")
    df = sample(spark)
    df.write.format("fermion").partitionBy("k", "d").save(f)
    df.write.partitionBy("k", "d").parquet(p)
    same_rows(spark.read.format("fermion").load(f).where(predicate), spark.read.parquet(p).where(predicate))


def test_pruning_skips_fragments_without_opening_them(spark, tmp_table):
    f = tmp_table("f")
    sample(spark).coalesce(1).write.format("fermion").partitionBy("k").save(f)
    table = spark.read.format("fermion").load(f)
    total = len(fermion_files(f))
    assert total == 4  # k = 0, 1, 2 and null
    q = table.where("k = 1")
    plan = explain(q)
    assert "PartitionPruning: 1 of 4 fragments" in plan, plan
    assert sorted(r.id for r in q.collect()) == [i for i in range(40) if i % 7 != 0 and i % 3 == 1]
    assert "PartitionPruning: 3 of 4 fragments" in explain(table.where("k > 0 OR k IS NULL AND id = 1"))
    assert "PartitionPruning: 2 of 4 fragments" in explain(table.where("k > 1 OR k IS NULL AND id = 1"))
    # The driver metric counts the fragments pruned (posted by the first run of a plan).
    fresh = table.where("k = 1")
    fresh.collect()
    assert driver_metric(fresh, "fragmentsPrunedByPartition") == 3
    # Only the kept fragment's file is read.
    files = {r.file for r in fresh.selectExpr("_metadata.file_path AS file").distinct().collect()}
    assert len(files) == 1


def test_create_table_partitioned_by_and_insert_overwrite_like_parquet(spark, tmp_table, drop):
    for fmt in ("fermion", "parquet"):
        drop(f"pt_{fmt}")
        spark.sql(f"CREATE TABLE pt_{fmt} (id BIGINT, v STRING, k INT) USING {fmt} PARTITIONED BY (k) "
                  f"LOCATION '{tmp_table(fmt)}'")
        spark.sql(f"INSERT INTO pt_{fmt} SELECT id, concat('a', id), CAST(id % 3 AS INT) FROM range(12)")
        # Static partition: only k = 1 is replaced.
        spark.sql(f"INSERT OVERWRITE pt_{fmt} PARTITION (k = 1) SELECT id, 'static' FROM range(100, 103)")
        spark.sql(f"INSERT INTO pt_{fmt} PARTITION (k = 5) VALUES (200, 'five')")
    cols = ("id", "v", "k")
    same_rows(spark.table("pt_fermion"), spark.table("pt_parquet"), cols)
    assert spark.table("pt_fermion").where("k = 1").select("v").distinct().collect()[0].v == "static"
    # A static overwrite without a PARTITION clause replaces everything.
    for fmt in ("fermion", "parquet"):
        spark.sql(f"INSERT OVERWRITE pt_{fmt} SELECT id, 'all', CAST(id % 2 AS INT) FROM range(4)")
    same_rows(spark.table("pt_fermion"), spark.table("pt_parquet"), cols)
    # DESCRIBE shows the partitioning as for Parquet.
    part = [r.col_name for r in spark.sql("DESCRIBE pt_fermion").collect()]
    assert "# Partition Information" in part


def test_dynamic_partition_overwrite_like_parquet(spark, tmp_table, drop):
    for fmt in ("fermion", "parquet"):
        drop(f"dy_{fmt}")
        spark.sql(f"CREATE TABLE dy_{fmt} (id BIGINT, v STRING, k INT) USING {fmt} PARTITIONED BY (k) "
                  f"LOCATION '{tmp_table(fmt)}'")
        spark.sql(f"INSERT INTO dy_{fmt} SELECT id, 'old', CAST(id % 4 AS INT) FROM range(20)")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        for fmt in ("fermion", "parquet"):
            spark.sql(f"INSERT OVERWRITE dy_{fmt} SELECT id, 'new', CAST(id % 2 AS INT) FROM range(100, 104)")
            spark.sql(f"INSERT OVERWRITE dy_{fmt} SELECT id, 'null', NULL FROM range(300, 302)")
        same_rows(spark.table("dy_fermion"), spark.table("dy_parquet"), ("id", "v", "k"))
        assert {r.k for r in spark.table("dy_fermion").where("v = 'old'").collect()} == {2, 3}
        # DataFrame writes in save mode overwrite follow the same setting.
        f, p = tmp_table("f"), tmp_table("p")
        sample(spark).write.format("fermion").partitionBy("k").save(f)
        sample(spark).write.partitionBy("k").parquet(p)
        new = spark.range(1000, 1003).selectExpr("id", "'n' AS v", "1 AS k", "DATE'2026-03-01' AS d")
        new.write.format("fermion").mode("overwrite").save(f)
        new.write.mode("overwrite").partitionBy("k").parquet(p)
        same_rows(spark.read.format("fermion").load(f), spark.read.parquet(p))
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    # The write option does the same without the session setting.
    f, p = tmp_table("f2"), tmp_table("p2")
    sample(spark).write.format("fermion").partitionBy("k").save(f)
    sample(spark).write.partitionBy("k").parquet(p)
    new = spark.range(1000, 1003).selectExpr("id", "'n' AS v", "2 AS k", "DATE'2026-03-01' AS d")
    new.write.format("fermion").mode("overwrite").option("partitionOverwriteMode", "dynamic").save(f)
    new.write.mode("overwrite").option("partitionOverwriteMode", "dynamic").partitionBy("k").parquet(p)
    same_rows(spark.read.format("fermion").load(f), spark.read.parquet(p))


def test_replace_where_replaces_matching_partitions_and_rejects_rows_outside(spark, tmp_table):
    f = tmp_table("f")
    sample(spark).write.format("fermion").partitionBy("k", "d").save(f)
    before = spark.read.format("fermion").load(f).collect()
    new = spark.range(500, 504).selectExpr("id", "'rw' AS v", "1 AS k", "DATE'2026-01-02' AS d")
    new.write.format("fermion").mode("overwrite").option("replaceWhere", "k = 1 AND d >= '2026-01-02'").save(f)
    # Delta's documented behaviour: rows matching the predicate are replaced, the others stay.
    kept = [r for r in before if not (r.k == 1 and str(r.d) >= "2026-01-02")]
    expected = spark.createDataFrame(kept, schema=spark.read.format("fermion").load(f).schema).unionByName(new)
    same_rows(spark.read.format("fermion").load(f), expected)
    # Written rows outside the predicate fail the write; nothing changes.
    current = rows_of(spark.read.format("fermion").load(f))
    outside = spark.range(600, 602).selectExpr("id", "'x' AS v", "2 AS k", "DATE'2026-01-02' AS d")
    message = error_of(lambda: outside.write.format("fermion").mode("overwrite")
                       .option("replaceWhere", "k = 1").save(f))
    assert "do not satisfy" in message and "k=2" in message, message
    assert rows_of(spark.read.format("fermion").load(f)) == current
    # Only partition columns: a predicate on a data column is refused, naming it.
    assert "not a partition column" in error_of(
        lambda: new.write.format("fermion").mode("overwrite").option("replaceWhere", "id > 3").save(f)
    )
    # A typo in the option's value fails clearly; the option is per write, never stored.
    assert "replaceWhere" in error_of(
        lambda: new.write.format("fermion").mode("overwrite").option("replaceWhere", "k = = 1").save(f)
    )


def test_partitioned_datasets_support_time_travel_delete_and_aggregates(spark, tmp_table):
    f = tmp_table("f")
    sample(spark).write.format("fermion").partitionBy("k").save(f)
    spark.sql(f"DELETE FROM fermion.`{f}` WHERE k = 2 AND id > 10")
    t = spark.read.format("fermion").load(f)
    expected = [r for r in sample(spark).collect() if not (r.k == 2 and r.id > 10)]
    assert rows_of(t.select("id", "v", "k", "d")) == rows_of(spark.createDataFrame(expected))
    v1 = spark.read.format("fermion").option("versionAsOf", 1).load(f)
    assert v1.count() == 40
    # Aggregates over partition columns are not answered from file statistics (files lack them).
    agg = t.selectExpr("count(k)", "min(k)", "max(k)", "count(*)").collect()[0]
    ref = spark.createDataFrame(expected).selectExpr("count(k)", "min(k)", "max(k)", "count(*)").collect()[0]
    assert tuple(agg) == tuple(ref)
    agg1 = v1.selectExpr("count(k)", "min(k)", "max(k)").collect()[0]
    assert tuple(agg1) == tuple(sample(spark).selectExpr("count(k)", "min(k)", "max(k)").collect()[0])


def test_unsupported_partition_columns_fail_clearly(spark, tmp_table):
    df = spark.range(3).selectExpr("id", "CAST(id AS DOUBLE) AS x")
    assert "cannot partition" in error_of(lambda: df.write.format("fermion").partitionBy("x").save(tmp_table()))
    assert "every column" in error_of(
        lambda: df.select("id").write.format("fermion").partitionBy("id").save(tmp_table())
    )
    assert "nope" in error_of(lambda: df.write.format("fermion").partitionBy("nope").save(tmp_table()))


def hive_dirs(spark, tmp_path, fmt, df):
    """`df` as Hive-style k=v directories of loose `fmt` files, one file per directory."""
    out = tmp_path / f"hive-{fmt}"
    staging = tmp_path / f"hive-staging-{fmt}"
    if fmt == "parquet":
        df.write.partitionBy("k", "s").parquet(str(out))
        return str(out)
    df.write.partitionBy("k", "s").parquet(str(staging))  # only for the directory names
    for d in sorted(glob.glob(str(staging / "k=*" / "s=*"))):
        rel = os.path.relpath(d, staging)
        k_raw, s_raw = (x.split("=", 1)[1] for x in rel.split(os.sep))
        part = spark.read.parquet(d)
        tmp = tmp_path / f"one-{rel.replace(os.sep, '_')}"
        part.coalesce(1).write.format("fermion").save(str(tmp))
        [src] = fermion_files(str(tmp))
        os.makedirs(out / rel, exist_ok=True)
        shutil.copy(src, out / rel / "part.fermion")
    return str(out)


def test_hive_style_directories_of_loose_files_read_their_partition_columns(spark, tmp_path):
    df = spark.range(0, 30).selectExpr(
        "id", "CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id % 3 AS INT) END AS k",
        "CASE WHEN id % 2 = 0 THEN 'a b' ELSE 'x/y' END AS s", "concat('v', id) AS v")
    f = hive_dirs(spark, tmp_path, "fermion", df)
    p = hive_dirs(spark, tmp_path, "parquet", df)
    fermion = spark.read.format("fermion").load(f)
    parquet = spark.read.parquet(p)
    assert dict(fermion.dtypes) == dict(parquet.dtypes)
    same_rows(fermion, parquet, ("id", "k", "s", "v"))
    for pred in ("k = 1", "k IS NULL", "s = 'x/y' AND id > 10", "k > 0 OR s = 'a b'"):
        same_rows(fermion.where(pred), parquet.where(pred), ("id", "k", "s", "v"))
    assert "PartitionPruning: 2 of" in explain(fermion.where("k = 1"))
    # Spark's type inference switch is honoured: without it partition values are strings.
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        assert dict(spark.read.format("fermion").load(f).dtypes)["k"] == \
            dict(spark.read.parquet(p).dtypes)["k"] == "string"
    finally:
        spark.conf.unset("spark.sql.sources.partitionColumnTypeInference.enabled")


def test_compaction_takes_and_replaced_partitioning(spark, tmp_table, drop):
    from fermion_spark.dataset import FermionDataset
    f = tmp_table("f")
    sample(spark, 0, 10).write.format("fermion").partitionBy("k").save(f)
    for lo in range(10, 40, 10):
        sample(spark, lo, lo + 10).write.format("fermion").mode("append").save(f)
    FermionDataset(spark, f).compact(target_rows=1000)
    table = spark.read.format("fermion").load(f)
    same_rows(table, sample(spark))
    assert "PartitionPruning: 1 of 4 fragments" in explain(table.where("k = 2")), "one fragment per partition"
    # Takes by row address read partition columns from the fragments too.
    addresses = [r._rowaddr for r in table.select("_rowaddr", "k").orderBy("_rowaddr").collect()][::7]
    by_take = spark.read.format("fermion").load(f).where(
        f"_rowaddr IN ({', '.join(map(str, addresses))})").select("_rowaddr", "id", "k", "d")
    assert "Take" in explain(by_take)
    by_scan = table.select("_rowaddr", "id", "k", "d").where(
        f"_rowaddr IN ({', '.join(map(str, addresses))})")
    assert rows_of(by_take) == rows_of(by_scan)
    # CREATE OR REPLACE TABLE ... PARTITIONED BY changes the partitioning in one new version.
    drop("repart")
    spark.sql(f"CREATE TABLE repart USING fermion PARTITIONED BY (k) AS SELECT * FROM fermion.`{f}`")
    spark.sql(f"CREATE OR REPLACE TABLE repart USING fermion PARTITIONED BY (d) AS SELECT * FROM fermion.`{f}`")
    same_rows(spark.table("repart"), sample(spark))
    kept, total = pruning(spark.table("repart").where("d = DATE'2026-01-01'"))
    assert 1 <= kept < total
    assert spark.table("repart").where("k = 1").count() == sample(spark).where("k = 1").count()


def test_describe_detail_lists_partition_columns(spark, tmp_table):
    f = tmp_table("f")
    sample(spark).write.format("fermion").partitionBy("k", "d").save(f)
    detail = spark.sql(f"DESCRIBE DETAIL fermion.`{f}`").collect()[0]
    assert list(detail.partitionColumns) == ["k", "d"]
    assert "partitions" in detail.tableFeatures


def test_join_keys_prune_partitions_at_run_time(spark, tmp_table):
    # Dynamic partition pruning, as Spark's file sources do it on partition columns: the keys of
    # the filtered side of a join prune the fragments of the other side once that side is built
    # (Spark plans it only under a likely selective filter on that side: a comparison, not a flag).
    f, p, d = tmp_table("f"), tmp_table("p"), tmp_table("d")
    facts = spark.range(0, 2000).selectExpr("id", "CAST(id % 20 AS INT) AS day", "concat('r', id % 3) AS region",
                                            "id * 0.5D AS amount")
    facts.write.format("fermion").partitionBy("day", "region").save(f)
    facts.write.partitionBy("day", "region").parquet(p)
    spark.range(0, 20).selectExpr("CAST(id AS INT) AS day", "CAST(id % 10 AS INT) AS pick", "concat('r', id % 3) AS region",
                                  "CAST(id * 7 % 20 AS INT) AS tag", "concat('d', id, '-', id % 4, 'x') AS label") \
        .write.format("fermion").save(d)
    spark.read.format("fermion").load(d).createOrReplaceTempView("dpp_days")
    spark.read.format("fermion").load(f).createOrReplaceTempView("dpp_fermion")
    spark.read.parquet(p).createOrReplaceTempView("dpp_parquet")
    for key in ("day", "region"):
        query = ("SELECT t.day, t.region, count(*) AS n, sum(t.amount) AS total FROM {t} t JOIN dpp_days s "
                 f"ON t.{key} = s.{key} WHERE s.pick = 3 GROUP BY t.day, t.region")
        got = spark.sql(query.format(t="dpp_fermion"))
        assert rows_of(got) == rows_of(spark.sql(query.format(t="dpp_parquet"))), key
        assert "dynamicpruning" in explain(got), explain(got)
        # 60 partitions (20 days x 3 regions) of 2 fragments: days 3 and 13 keep 12 of 120; their
        # regions r0 and r1, 80.
        scan = next(n for n in batch_scans(got) if "dpp_days" not in n.toString() and "RuntimeFilters: [dyn" in n.toString())
        pruned = scan.metrics().apply("fragmentsPrunedByPartition").value()
        assert pruned == (108 if key == "day" else 40), (key, pruned)
    # A filter keeping 1 row in 20 would be taken over exactly by a large scan (Spark then plans no
    # Filter); the dimension, small enough to be broadcast whole, keeps Spark's Filter, from which
    # Spark plans the pruning: only day 1's 6 fragments are read.
    query = ("SELECT t.day, count(*) AS n, sum(t.amount) AS total FROM {t} t JOIN dpp_days s "
             "ON t.day = s.day WHERE s.tag = 7 GROUP BY t.day")
    got = spark.sql(query.format(t="dpp_fermion"))
    assert rows_of(got) == rows_of(spark.sql(query.format(t="dpp_parquet"))) and len(rows_of(got)) == 1
    assert "dynamicpruning" in explain(got), explain(got)
    scan = next(n for n in batch_scans(got) if "RuntimeFilters: [dyn" in n.toString())
    assert scan.metrics().apply("fragmentsPrunedByPartition").value() == 114
    # So does a LIKE Spark cannot push (left Spark's own over a small table): only day 7's label
    # matches '%d7-%x%', and day 7's 6 fragments are read.
    query = ("SELECT t.day, count(*) AS n FROM {t} t JOIN dpp_days s ON t.day = s.day "
             "WHERE s.label LIKE '%d7-%x%' GROUP BY t.day")
    got = spark.sql(query.format(t="dpp_fermion"))
    assert rows_of(got) == rows_of(spark.sql(query.format(t="dpp_parquet"))) and len(rows_of(got)) == 1
    scan = next(n for n in batch_scans(got) if "RuntimeFilters: [dyn" in n.toString())
    assert scan.metrics().apply("fragmentsPrunedByPartition").value() == 114
    spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.enabled", "false")
    try:
        plain = spark.sql("SELECT count(*) FROM dpp_fermion t JOIN dpp_days s ON t.day = s.day WHERE s.pick = 3")
        assert plain.collect()[0][0] == 200
        assert "dynamicpruning" not in explain(plain)
    finally:
        spark.conf.unset("spark.sql.optimizer.dynamicPartitionPruning.enabled")
