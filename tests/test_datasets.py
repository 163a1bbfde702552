"""Fermion datasets end to end: versions from every write, time travel, deletes (API and SQL),
metadata-only schema changes, tags, `_rowaddr`, and concurrent writers in threads and processes."""
import functools
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from pyspark.sql import functions as F

from conftest import child_env, rows_of
from fermion_spark import errors, tools
from fermion_spark.dataset import FermionDataset


def ids(df):
    return sorted(r[0] for r in df.select("id").collect())


def test_every_write_is_a_version_and_old_versions_stay_readable(spark, tmp_table):
    path = tmp_table()
    spark.range(10).write.format("fermion").save(path)
    spark.range(10, 15).write.format("fermion").mode("append").save(path)
    spark.range(100, 103).selectExpr("id", "cast(id as string) as s").write.format("fermion").mode("overwrite").save(path)
    ds = FermionDataset(spark, path)
    hist = ds.versions().orderBy("version").collect()
    assert [(r.version, r.operation, r.rows) for r in hist] == [(1, "create", 10), (2, "append", 15), (3, "overwrite", 3)]
    assert os.path.isdir(os.path.join(path, "_versions")) and os.path.isdir(os.path.join(path, "_transactions"))
    def read():  # a fresh reader each time: DataFrameReader.option mutates the reader
        return spark.read.format("fermion")
    assert ids(read().option("versionAsOf", 1).load(path)) == list(range(10))
    assert ids(read().option("versionAsOf", 2).load(path)) == list(range(15))
    latest = read().load(path)
    assert latest.columns == ["id", "s"] and ids(latest) == [100, 101, 102]
    assert read().option("versionAsOf", 2).load(path).columns == ["id"], "time travel returns the old schema too"
    # by time: the version current at version 2's commit time
    ts = hist[1].timestamp.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert ids(read().option("timestampAsOf", ts).load(path)) == list(range(15))
    # by tag
    ds.create_tag("before-overwrite", 2)
    assert ds.tags() == {"before-overwrite": 2}
    assert ids(read().option("tag", "before-overwrite").load(path)) == list(range(15))
    with pytest.raises(errors.FermionVersionNotFoundError):
        read().option("versionAsOf", 9).load(path).collect()
    with pytest.raises(Exception, match="at most one of"):
        read().option("versionAsOf", 1).option("tag", "x").load(path).collect()


def test_delete_by_predicate_and_time_travel_before_it(spark, tmp_table):
    path = tmp_table()
    df = spark.range(0, 50_000, 1, 4).selectExpr("id", "id % 7 as k", "array(id, id) as a", "named_struct('x', id) as st")
    df.write.format("fermion").option("stripeRows", "3000").save(path)
    ds = FermionDataset(spark, path)
    assert ds.delete("k = 3") == len([i for i in range(50_000) if i % 7 == 3])
    after = spark.read.format("fermion").load(path)
    expected = [i for i in range(50_000) if i % 7 != 3]
    assert ids(after) == expected
    assert after.count() == len(expected), "COUNT(*) must not come from file statistics once rows are deleted"
    assert after.agg(F.min("k"), F.max("k"), F.sum("a")[0] if False else F.sum(F.col("st.x"))).collect()[0] == (0, 6, sum(expected))
    assert rows_of(after.where("id < 20")) == rows_of(df.where("id < 20 and k != 3"))
    # a second delete on the same fragments merges with the first deletion file
    assert ds.delete("id >= 49990") == len([i for i in range(49990, 50_000) if i % 7 != 3])
    assert ids(spark.read.format("fermion").load(path)) == [i for i in expected if i < 49990]
    assert ids(spark.read.format("fermion").option("versionAsOf", 1).load(path)) == list(range(50_000))
    assert ds.delete("id < 0") == 0, "nothing matched: no new version"
    assert ds.latest_version() == 3
    # deleting every row of a fragment drops the fragment
    ds.delete("true")
    assert spark.read.format("fermion").load(path).count() == 0 and ds.count_rows() == 0
    assert ds.versions().orderBy("version").collect()[-1].fragments == 0


def test_sql_delete_from_a_catalog_table(spark, tmp_table):
    path = tmp_table()
    spark.range(1000).selectExpr("id", "id % 10 as k").write.format("fermion").save(path)
    spark.sql(f"CREATE TABLE del_t USING fermion LOCATION '{path}'")
    try:
        spark.sql("DELETE FROM del_t WHERE k = 4 OR id > 990")
        got = ids(spark.table("del_t"))
        assert got == [i for i in range(1000) if i % 10 != 4 and i <= 990]
        assert ids(spark.read.format("fermion").option("versionAsOf", 1).load(path)) == list(range(1000))
    finally:
        spark.sql("DROP TABLE del_t")


def test_sql_time_travel_and_alter_table(spark, tmp_table):
    path = tmp_table()
    spark.range(5).selectExpr("id", "id * 10 as v").write.format("fermion").save(path)
    spark.sql(f"CREATE TABLE tt USING fermion LOCATION '{path}'")
    try:
        spark.sql("INSERT INTO tt VALUES (5, 50), (6, 60)")
        spark.sql("DELETE FROM tt WHERE id = 0")
        assert ids(spark.sql("SELECT * FROM tt VERSION AS OF 1")) == list(range(5))
        assert ids(spark.sql("SELECT * FROM tt VERSION AS OF 2")) == list(range(7))
        assert ids(spark.sql("SELECT * FROM tt")) == list(range(1, 7))
        ts = FermionDataset(spark, path).versions().where("version = 2").collect()[0].timestamp
        assert ids(spark.sql(f"SELECT * FROM tt TIMESTAMP AS OF '{ts}'")) == list(range(7))
        spark.sql("ALTER TABLE tt ADD COLUMNS (note string)")
        spark.sql("ALTER TABLE tt RENAME COLUMN v TO ten_times")
        assert spark.table("tt").columns == ["id", "ten_times", "note"]
        assert spark.read.format("fermion").load(path).columns == ["id", "ten_times", "note"]
        spark.sql("INSERT INTO tt VALUES (7, 70, 'seven')")
        assert [tuple(r) for r in spark.sql("SELECT id, ten_times, note FROM tt WHERE id >= 6 ORDER BY id").collect()] == \
            [(6, 60, None), (7, 70, "seven")]
        spark.sql("ALTER TABLE tt DROP COLUMN note")
        assert spark.table("tt").columns == ["id", "ten_times"]
        assert spark.sql("SELECT * FROM tt VERSION AS OF 1").columns == ["id", "v"]
        with pytest.raises(errors.FermionVersionNotFoundError):
            spark.sql("SELECT * FROM tt VERSION AS OF 99").collect()
    finally:
        spark.sql("DROP TABLE tt")
    # tables of other formats keep Spark's own behaviour in the same catalog
    spark.sql("CREATE TABLE plain_pq (id bigint) USING parquet")
    try:
        spark.sql("INSERT INTO plain_pq VALUES (1)")
        spark.sql("ALTER TABLE plain_pq ADD COLUMNS (x int)")
        assert spark.table("plain_pq").columns == ["id", "x"]
    finally:
        spark.sql("DROP TABLE plain_pq")


def test_compaction_and_cleanup(spark, tmp_table):
    path = tmp_table()
    for i in range(6):
        spark.range(i * 100, i * 100 + 100, 1, 2).selectExpr("id", "id % 5 as k").write.format("fermion").mode("append").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("k = 0")
    ds.drop_columns(["k"])
    before = ds.latest_version()
    expected = [i for i in range(600) if i % 5 != 0]
    assert ds.versions().where(f"version = {before}").collect()[0].fragments == 12
    after = ds.compact(target_rows=250)
    hist = ds.versions().orderBy("version").collect()
    assert after == before + 1 and hist[-1].operation == "compact" and hist[-1].fragments == 2
    assert ids(spark.read.format("fermion").load(path)) == expected
    assert spark.read.format("fermion").load(path).count() == len(expected)
    assert ds.compact(target_rows=250) == after, "nothing left to compact"
    assert ids(spark.read.format("fermion").option("versionAsOf", 3).load(path)) == list(range(300))
    ds.create_tag("third", 3)
    data_files = len(os.listdir(os.path.join(path, "data")))
    with pytest.raises(Exception, match="allowShortRetention"):
        ds.cleanup(retain_hours=0)
    removed = ds.cleanup(retain_hours=0, allow_short_retention=True)
    assert removed["versions"] == after - 2, removed  # all but the latest and the tagged one
    assert removed["files"] > 0 and len(os.listdir(os.path.join(path, "data"))) < data_files
    assert [r.version for r in ds.versions().orderBy("version").collect()] == [3, after]
    assert ids(spark.read.format("fermion").load(path)) == expected
    assert ids(spark.read.format("fermion").option("tag", "third").load(path)) == list(range(300))
    with pytest.raises(errors.FermionVersionNotFoundError):
        spark.read.format("fermion").option("versionAsOf", 2).load(path).collect()


def test_add_columns_computed_from_existing_ones_without_rewriting(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 20_000, 1, 3).selectExpr("id", "cast(id as string) as s").write.format("fermion").option("stripeRows", "1500").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("id % 10 = 0")
    data_dir = os.path.join(path, "data")
    before = {n: os.path.getmtime(os.path.join(data_dir, n)) for n in os.listdir(data_dir)}
    v = ds.add_columns_from({"bucket": "id % 16", "label": "concat('x', s)", "pair": "array(id, id + 1)"})
    after = os.listdir(data_dir)
    assert all(os.path.getmtime(os.path.join(data_dir, n)) == t for n, t in before.items()), "existing files untouched"
    assert len(after) == len(before) + 3, "one new file per fragment"
    df = spark.read.format("fermion").load(path)
    assert df.columns == ["id", "s", "bucket", "label", "pair"]
    expected = [(i, str(i), i % 16, "x" + str(i), [i, i + 1]) for i in range(20_000) if i % 10 != 0]
    assert sorted(tuple(r) for r in df.collect()) == expected
    assert df.where("bucket = 3").count() == len([e for e in expected if e[2] == 3])
    assert df.select("label").where("id = 777").collect()[0].label == "x777"
    # appended rows lack the files: their new columns read as written, old versions read as before
    spark.range(20_000, 20_010).selectExpr("id", "cast(id as string) as s", "id % 16 as bucket", "'y' as label",
                                           "array(id) as pair").write.format("fermion").mode("append").save(path)
    assert spark.read.format("fermion").load(path).where("label = 'y'").count() == 10
    assert spark.read.format("fermion").option("versionAsOf", v - 1).load(path).columns == ["id", "s"]
    ds.delete("id = 777")
    assert spark.read.format("fermion").load(path).where("id = 777").count() == 0
    ds.compact(target_rows=100_000)
    assert sorted(tuple(r) for r in spark.read.format("fermion").load(path).where("id < 20000").collect()) == \
        [e for e in expected if e[0] != 777]


def test_add_columns_from_a_dataframe(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 5000, 1, 2).selectExpr("id").write.format("fermion").option("stripeRows", "700").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("id = 10")
    labels = spark.range(0, 5000).where("id % 3 != 0").selectExpr("id", "concat('L', id) as label", "id * 0.5 as w")
    values = spark.read.format("fermion").load(path).select("_rowaddr", "id").join(labels, "id").drop("id")
    ds.add_columns_from_dataframe(values)
    df = spark.read.format("fermion").load(path)
    assert df.columns == ["id", "label", "w"]
    got = sorted(tuple(r) for r in df.collect())
    assert got == [(i, None, None) if i % 3 == 0 else (i, f"L{i}", i * 0.5) for i in range(5000) if i != 10]
    with pytest.raises(Exception, match="_rowaddr"):
        ds.add_columns_from_dataframe(labels)
    dup = spark.read.format("fermion").load(path).selectExpr("_rowaddr", "1 as x").unionAll(
        spark.read.format("fermion").load(path).selectExpr("_rowaddr", "2 as x"))
    with pytest.raises(Exception, match="two values"):
        ds.add_columns_from_dataframe(dup)
    assert ds.versions().orderBy("version").collect()[-1].operation == "add_columns"


def test_stable_row_ids(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 100, 1, 2).write.format("fermion").option("stableRowIds", "true").save(path)
    spark.range(100, 150).write.format("fermion").mode("append").save(path)

    def row_ids():
        return {r.id: r._rowid for r in spark.read.format("fermion").load(path).select("id", "_rowid").collect()}

    first = row_ids()
    assert sorted(first.values()) == list(range(150)), "ids are dense, in commit order"
    FermionDataset(spark, path).delete("id % 3 = 0")
    after = row_ids()
    assert all(after[k] == first[k] for k in after) and len(after) == 100, "a delete keeps every other row's id"
    spark.range(150, 160).write.format("fermion").mode("append").save(path)
    newest = row_ids()
    assert sorted(v for k, v in newest.items() if k >= 150) == list(range(150, 160)), "ids are never reused"
    FermionDataset(spark, path).compact(target_rows=1000)
    assert row_ids() == newest, "compaction keeps every row's id"
    plain = tmp_table()
    spark.range(5).write.format("fermion").save(plain)
    assert {r._rowid for r in spark.read.format("fermion").load(plain).select("_rowid").collect()} == {None}


def test_rowaddr_metadata_column(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 1000, 1, 2).write.format("fermion").option("stripeRows", "100").save(path)
    rows = spark.read.format("fermion").load(path).select("id", "_rowaddr").collect()
    addr = {r.id: r._rowaddr for r in rows}
    assert len(set(addr.values())) == 1000
    frags = {a >> 32 for a in addr.values()}
    assert frags == {1, 2}
    offsets = sorted(a & 0xFFFFFFFF for a in addr.values() if a >> 32 == 1)
    assert offsets == list(range(len(offsets))), "offsets count the rows of the fragment"


def test_schema_changes_are_metadata_only(spark, tmp_table):
    path = tmp_table()
    spark.range(100).selectExpr("id", "id * 2 as v", "cast(id as string) as s").write.format("fermion").save(path)
    data_dir = os.path.join(path, "data")
    files_before = sorted(os.listdir(data_dir))
    ds = FermionDataset(spark, path)
    ds.add_columns("score double, tags array<string>")
    added = spark.read.format("fermion").load(path)
    assert added.columns == ["id", "v", "s", "score", "tags"]
    assert added.where("score is null and tags is null").count() == 100
    spark.range(100, 105).selectExpr("id", "id * 2 as v", "cast(id as string) as s", "id / 2 as score", "array('a') as tags") \
        .write.format("fermion").mode("append").save(path)
    assert spark.read.format("fermion").load(path).where("score is not null").count() == 5
    ds.rename_column("v", "doubled")
    renamed = spark.read.format("fermion").load(path)
    assert renamed.columns == ["id", "doubled", "s", "score", "tags"]
    assert sorted(r.doubled for r in renamed.collect()) == [2 * i for i in range(105)]
    assert renamed.where("doubled = 40").select("id").collect()[0].id == 20, "pushdown follows the renamed column"
    # swap two names: pushdown must follow field ids, not the names the files were written with
    spark.range(0, 10_000, 1, 1).selectExpr("id as a", "-id as b").write.format("fermion").option("stripeRows", "1000").save(path + "-swap")
    swap = FermionDataset(spark, path + "-swap")
    swap.rename_column("a", "tmp")
    swap.rename_column("b", "a")
    swap.rename_column("tmp", "b")
    swapped = spark.read.format("fermion").load(path + "-swap")
    assert swapped.where("a = -5000").count() == 1 and swapped.where("b = 5000").count() == 1
    assert swapped.where("b < 10").count() == 10
    ds.drop_columns(["s"])
    dropped = spark.read.format("fermion").load(path)
    assert dropped.columns == ["id", "doubled", "score", "tags"]
    ds.add_columns("s string")
    assert spark.read.format("fermion").load(path).where("s is not null").count() == 0, "a re-added column does not resurrect old data"
    spark.createDataFrame([(999, 1998, 0.5, ["q"], "zzz")], "id bigint, doubled bigint, score double, tags array<string>, s string") \
        .write.format("fermion").mode("append").save(path)
    ds.drop_columns(["s"])  # the column with the largest id: its id must not be handed out again
    ds.add_columns("t string")
    assert spark.read.format("fermion").load(path).where("t is not null").count() == 0
    assert set(files_before) <= set(os.listdir(data_dir)), "no schema change rewrote a data file"
    assert spark.read.format("fermion").option("versionAsOf", 1).load(path).columns == ["id", "v", "s"]
    with pytest.raises(Exception, match="already has one"):
        ds.add_columns("id bigint")
    with pytest.raises(Exception, match="no such column"):
        ds.rename_column("nope", "x")


def test_concurrent_appends_from_threads_all_land(spark, tmp_table):
    path = tmp_table()
    spark.range(0).write.format("fermion").save(path)
    errors = []

    def append(i):
        try:
            spark.range(i * 1000, i * 1000 + 100).write.format("fermion").mode("append").save(path)
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=append, args=(i,)) for i in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors, errors
    assert ids(spark.read.format("fermion").load(path)) == sorted(i * 1000 + j for i in range(6) for j in range(100))
    assert FermionDataset(spark, path).latest_version() == 7


WRITER = textwrap.dedent("""
    import sys, time
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion
    path, worker, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    spark = configure_spark_with_fermion(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")).getOrCreate()
    from fermion_spark.dataset import FermionDataset
    from fermion_spark.errors import FermionCommitConflictError
    ds = FermionDataset(spark, path)
    for i in range(n):
        start = worker * 1_000_000 + i * 100
        spark.range(start, start + 100).write.format("fermion").mode("append").save(path)
        print("appended", start, flush=True)
        try:
            ds.delete(f"id = {start}")
            print("deleted", start, flush=True)
        except FermionCommitConflictError:
            print("conflict", start, flush=True)
    spark.stop()
""")


def test_concurrent_writers_in_separate_processes(spark, tmp_table, tmp_path):
    path = tmp_table()
    spark.range(0).write.format("fermion").save(path)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), path, str(w), "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=child_env())
             for w in range(2)]  # two PySpark JVMs (the test's cost) race for every version
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    expected = set()
    for out, _ in outs:
        for line in out.splitlines():
            word, start = line.split()
            start = int(start)
            if word == "appended":
                expected |= set(range(start, start + 100))
            elif word == "deleted":
                expected.discard(start)
    assert len(expected) >= 2 * 4 * 99
    assert set(ids(spark.read.format("fermion").load(path))) == expected
    # Every version stays readable, and appends and deletes of 100 ids each leave positive counts; one job.
    latest = FermionDataset(spark, path).latest_version()
    versions = [spark.read.format("fermion").option("versionAsOf", v).load(path).select(F.lit(v).alias("v"))
                for v in range(1, latest + 1)]
    counts = dict(functools.reduce(lambda a, b: a.unionAll(b), versions).groupBy("v").count().collect())
    assert counts.get(latest) == len(expected), (counts, len(expected))
    assert all(counts.get(v, 0) > 0 for v in range(2, latest + 1)), counts


def test_damaged_dataset_metadata_fails_with_typed_errors(spark, tmp_table):
    path = tmp_table()
    spark.range(1000).write.format("fermion").save(path)
    FermionDataset(spark, path).delete("id % 3 = 0")  # v2: Arrow deletion files
    versions = os.path.join(path, "_versions")
    latest = sorted(n for n in os.listdir(versions) if n.endswith(".manifest"))[0]  # V2 names: newest first
    deletions = [os.path.join(path, "_deletions", n) for n in os.listdir(os.path.join(path, "_deletions"))]
    blob = bytearray(open(os.path.join(versions, latest), "rb").read())
    blob[30] ^= 0x20
    open(os.path.join(versions, latest), "wb").write(bytes(blob))
    with pytest.raises(errors.InvalidFermionDatasetError, match="CRC32"):
        spark.read.format("fermion").load(path).collect()
    assert ids(spark.read.format("fermion").option("versionAsOf", 1).load(path)) == list(range(1000))
    blob[30] ^= 0x20
    open(os.path.join(versions, latest), "wb").write(bytes(blob))
    for d in deletions:
        open(d, "wb").write(b"not an arrow file")
    with pytest.raises(errors.InvalidFermionDatasetError, match="deletion file"):
        spark.read.format("fermion").load(path).collect()
    with pytest.raises(Exception, match="versionAsOf"):
        spark.read.format("fermion").option("versionAsOf", "latest").load(path).collect()


CREATOR = textwrap.dedent("""
    import os, sys, time
    from pyspark.sql import SparkSession, functions as F
    from fermion_spark import configure_spark_with_fermion
    base, worker = sys.argv[1], int(sys.argv[2])
    spark = configure_spark_with_fermion(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    # the first row of a job waits, so that both jobs plan (and check existence) before either commits
    slow = F.udf(lambda x: (time.sleep(1.5) if x % 100 == 0 else None, x)[1], "bigint")
    spark.range(1).select(slow("id")).collect()  # warm up the Python worker

    def barrier(step):
        open(f"{base}.{step}.{worker}", "w").close()
        while not all(os.path.exists(f"{base}.{step}.{w}") for w in (0, 1)):
            time.sleep(0.005)

    for mode in ("overwrite", "errorifexists", "ignore"):
        barrier(mode)
        df = spark.range(worker * 100, worker * 100 + 10, 1, 1).select(slow("id").alias("id"))
        try:
            df.write.format("fermion").mode(mode).save(f"{base}-{mode}")
            print(mode, "ok", flush=True)
        except Exception as e:
            print(mode, "error", type(e).__name__, str(e).splitlines()[0], flush=True)
    spark.stop()
""")


def test_concurrent_creations_in_every_save_mode_leave_one_jobs_rows(spark, tmp_table, tmp_path):
    """Issue 13: two processes create the same new dataset at once. As in a serial run, the dataset
    holds one job's rows: overwrite/overwrite both succeed (the later commit replaces the other);
    errorifexists/errorifexists and ignore/ignore: one commits, the other fails with "already
    exists" (FermionCommitConflictError) without writing anything."""
    base = tmp_table()
    script = tmp_path / "creator.py"
    script.write_text(CREATOR)
    procs = [subprocess.Popen([sys.executable, str(script), base, str(w)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=child_env()) for w in (0, 1)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    results = {}
    for w, (out, _) in enumerate(outs):
        for line in out.splitlines():
            mode, rest = line.split(" ", 1)
            results.setdefault(mode, {})[w] = rest
    jobs = [set(range(0, 10)), set(range(100, 110))]
    for mode in ("overwrite", "errorifexists", "ignore"):
        got = set(ids(spark.read.format("fermion").load(f"{base}-{mode}")))
        assert got in jobs, f"{mode}: {results[mode]} left {sorted(got)}"
        outcome = results[mode]
        if mode == "overwrite":
            assert outcome == {0: "ok", 1: "ok"}, outcome
            assert [r.operation for r in FermionDataset(spark, f"{base}-{mode}").versions().collect()] \
                == ["overwrite", "overwrite"]
        else:
            winners = [w for w, r in outcome.items() if r == "ok"]
            losers = [r for r in outcome.values() if r != "ok"]
            if mode == "ignore" and len(winners) == 2:
                continue  # the second job saw the dataset before writing: a serial run, nothing written
            assert len(winners) == 1 and got == jobs[winners[0]], outcome
            assert "already exists" in losers[0], outcome
            assert FermionDataset(spark, f"{base}-{mode}").latest_version() == 1


KILLED_AT_RANDOM = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion
    path, run = sys.argv[1], int(sys.argv[2])
    spark = configure_spark_with_fermion(SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")).getOrCreate()
    print("ready", flush=True)
    i = 0
    while True:
        start = run * 1_000_000_000 + i * 20_000
        spark.range(start, start + 20_000, 1, 3).selectExpr("id", "uuid() AS u").write.format("fermion").mode("append").save(path)
        print("committed", i, flush=True)
        i += 1
""")


def test_spark_writers_killed_at_random_points_lose_no_commit(spark, tmp_table, tmp_path):
    """Crash soak through the Spark commit path: PySpark writers killed with SIGKILL at random
    moments of their appends after their first commit; after each kill the dataset holds exactly the batches that committed
    (each reported one, and at most the one being committed when the kill came), every version
    reads, and a cleanup with no writer left removes every unreferenced file."""
    import random
    path = tmp_table()
    spark.range(0).selectExpr("id", "uuid() AS u").write.format("fermion").save(path)
    script = tmp_path / "killed_at_random.py"
    script.write_text(KILLED_AT_RANDOM)
    rnd = random.Random(13)
    expected = set()
    read_versions = 0
    # Two kills (each a fresh PySpark JVM, the test's main cost); `dev/soak crash` kills hundreds
    # of writers through the same commit protocol in core.
    for run in range(2):
        log = tmp_path / f"writer-{run}.log"
        with open(log, "w") as err:
            p = subprocess.Popen([sys.executable, str(script), path, str(run)], stdout=subprocess.PIPE,
                                 stderr=err, text=True, env=child_env())
        assert p.stdout.readline().strip() == "ready", log.read_text()[-3000:]
        # The kill comes at a random moment after the first commit, not after start: a writer's
        # first append in a fresh JVM can take longer than any fixed delay on a loaded machine,
        # and a run killed before it commits anything tests nothing.
        assert p.stdout.readline().startswith("committed"), "no first commit:\n" + log.read_text()[-3000:]
        time.sleep(rnd.uniform(0.0, 3.0))
        p.kill()  # SIGKILL
        out, _ = p.communicate()
        reported = 1 + sum(1 for line in out.splitlines() if line.startswith("committed"))
        got = set(ids(spark.read.format("fermion").load(path)))
        batch = lambda i: set(range(run * 1_000_000_000 + i * 20_000, run * 1_000_000_000 + (i + 1) * 20_000))  # noqa: E731
        committed = set().union(*(batch(i) for i in range(reported)))
        maybe = batch(reported)  # the append under way when the kill came: all or nothing
        assert got - expected in (committed, committed | maybe), (run, reported, len(got - expected))
        expected = got
        # Every new version reads (old ones are immutable, read after earlier runs), in one job:
        # appends only, so row counts never fall, and the latest holds what the dataset shows.
        latest = FermionDataset(spark, path).latest_version()
        new_versions = [spark.read.format("fermion").option("versionAsOf", v).load(path).select(F.lit(v).alias("v"))
                        for v in range(read_versions + 1, latest + 1)]
        counts = dict(functools.reduce(lambda a, b: a.unionAll(b), new_versions).groupBy("v").count().collect())
        sizes = [counts.get(v, 0) for v in range(read_versions + 1, latest + 1)]
        assert sizes == sorted(sizes) and sizes[-1] == len(got), (read_versions, sizes, len(got))
        read_versions = latest
    time.sleep(1.1)
    FermionDataset(spark, path).cleanup(retain_hours=0, allow_short_retention=True)
    assert set(ids(spark.read.format("fermion").load(path))) == expected
    referenced = {os.path.basename(f["path"]) for fragment in tools.inspect(path, spark=spark)["fragments"]
                  for f in fragment["files"]}
    assert referenced, "the dataset lists no data file"
    assert set(os.listdir(os.path.join(path, "data"))) == referenced, "cleanup left orphans or removed a referenced file"
    assert not [f for f in os.listdir(os.path.join(path, "_versions")) if f.startswith(".tmp")]
