"""Random access: take by position, stable row id and address (the Python dataset API, a
DataFrame of ids joined by takes per fragment, and `_rowid` / `_rowaddr` predicates pushed down
to a take), compared with the same rows found by scanning."""
import random

import pytest

from conftest import rows_of
from fermion_spark.dataset import FermionDataset


@pytest.fixture(scope="module")
def changed(spark, tmp_path_factory):
    """A dataset with stable row ids, nulls (null array elements and map values too), nested values,
    a delete, a rename and an added column."""
    path = str(tmp_path_factory.mktemp("take") / "t")
    spark.range(0, 6000, 1, 3).selectExpr(
        "id", "if(id % 11 = 0, null, concat('s', id)) as name",
        "if(id % 13 = 0, null, transform(sequence(0, cast(id % 5 as int)), i -> cast(i * id as float))) as vec",
        "named_struct('x', id % 7, 'y', if(id % 3 = 0, null, unhex(hex(id)))) as st",
        "if(id % 17 = 0, null, array(if(id % 2 = 0, null, id), id)) as arr",
        "if(id % 19 = 0, null, map('k', if(id % 4 = 0, null, id))) as m",
    ).write.format("fermion").option("stableRowIds", "true").option("stripeRows", "1000") \
        .option("pageRows", "256").save(path)
    spark.range(6000, 7000).selectExpr(
        "id", "concat('s', id) as name", "array(cast(id as float)) as vec",
        "named_struct('x', id % 7, 'y', unhex('00')) as st", "array(cast(null as bigint)) as arr",
        "map('k', cast(null as bigint)) as m").write.format("fermion").mode("append").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("id % 10 = 3")
    ds.rename_column("name", "label")
    ds.add_columns_from({"extra": "id * 2"})
    return path


def scan(spark, path):
    return spark.read.format("fermion").option("filterPushdown", "false").load(path)


def test_take_by_position_row_id_and_address_equals_the_scan(spark, changed):
    ds = FermionDataset(spark, changed)
    everything = scan(spark, changed).select("*", "_rowaddr", "_rowid").orderBy("_rowaddr").collect()
    rnd = random.Random(3)
    picks = [rnd.randrange(len(everything)) for _ in range(60)] + [0, 0, len(everything) - 1]
    cols = ["id", "label", "vec", "st", "arr", "m", "extra", "_rowaddr", "_rowid"]

    def as_tuples(rows):
        return [tuple(r[c] for c in cols) for r in rows]

    expected = as_tuples([everything[p] for p in picks])
    got = ds.take(picks).collect()
    assert as_tuples(got) == expected, "positions, in request order, repeats kept"
    got = ds.take_rows([everything[p]["_rowid"] for p in picks]).collect()
    assert as_tuples(got) == expected
    got = ds.take_addresses([everything[p]["_rowaddr"] for p in picks], columns=["st.y", "id"]).collect()
    assert [(r["st"]["y"], r["id"]) for r in got] == [(everything[p]["st"]["y"], everything[p]["id"]) for p in picks]
    # a deleted row is an error naming it, not a silent null
    deleted_id = 13  # id % 10 == 3
    with pytest.raises(Exception, match="deleted"):
        ds.take_rows([deleted_id]).collect()


def test_rowid_and_rowaddr_predicates_are_taken_not_scanned(spark, changed):
    t = spark.read.format("fermion").load(changed)
    ids = [5, 17, 13, 999, 6500, 123456789]  # 13 is deleted, 123456789 does not exist
    q = t.where(f"_rowid IN ({', '.join(map(str, ids))})").select("id", "label", "_rowid")
    plan = q._jdf.queryExecution().executedPlan().toString()
    assert "Take: _rowid IN (6 values)" in plan, plan
    expected = scan(spark, changed).where(f"_rowid IN ({', '.join(map(str, ids))})").select("id", "label", "_rowid")
    assert rows_of(q) == rows_of(expected) and len(rows_of(q)) == 4
    one = t.where("_rowid = 17 and label like 's1%'").select("id")
    assert "Take" in one._jdf.queryExecution().executedPlan().toString()
    assert [r.id for r in one.collect()] == [17]
    addr = t.where("id = 6500").select("_rowaddr").collect()[0][0]
    by_addr = t.where(f"_rowaddr = {addr}").select("id", "extra")
    assert by_addr.collect() == [(6500, 13000)]


def jobs_run_by(spark, f):
    """The Spark jobs `f()` started (counted by job group), and what it returned."""
    sc = spark.sparkContext
    group = f"fermion-test-{random.getrandbits(32)}"
    sc.setJobGroup(group, "counting jobs")
    try:
        out = f()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group)), out


def test_lookups_of_few_rows_run_on_the_driver_and_stay_exact(spark, changed):
    """Up to `localTakeMaxRows` rows by `_rowid` / `_rowaddr` are read on the driver (EXPLAIN:
    FermionTake, no Spark job); more rows by tasks. The lookup predicates are not evaluated again
    after the take, so whatever Spark could push on top (counts, limits, the other column's
    predicates, other filters) must still see exactly the looked-up rows."""
    t = spark.read.format("fermion").load(changed)
    every = scan(spark, changed)
    ids = [5, 17, 13, 999, 6500, 123456789, 42, 6998]  # 13 deleted, 123456789 absent
    in_list = ", ".join(map(str, ids))
    q = t.where(f"_rowid IN ({in_list})").select("id", "label", "vec", "st", "m", "_rowid")
    plan = q._jdf.queryExecution().executedPlan().toString()
    assert "FermionTake" in plan and "Take: _rowid IN (8 values), on the driver" in plan, plan
    jobs, got = jobs_run_by(spark, q.collect)
    assert jobs == 0, f"{jobs} Spark jobs for a lookup of {len(ids)} rows"
    expected = every.where(f"_rowid IN ({in_list})").select("id", "label", "vec", "st", "m", "_rowid")
    assert sorted(got, key=lambda r: r.id) == sorted(expected.collect(), key=lambda r: r.id) and len(got) == 6
    # More rows than localTakeMaxRows: tasks, same rows.
    many = spark.read.format("fermion").option("localTakeMaxRows", "3").load(changed) \
        .where(f"_rowid IN ({in_list})").select("id", "label", "vec", "st", "m", "_rowid")
    plan = many._jdf.queryExecution().executedPlan().toString()
    assert "BatchScan" in plan and "on the driver" not in plan, plan
    assert rows_of(many) == rows_of(expected)
    # What Spark may push above a scan whose lookup predicates it no longer evaluates.
    for sql_filter, tail in [(f"_rowid IN ({in_list})", lambda d: d.count()),
                             (f"_rowid IN ({in_list}) AND id > 100", lambda d: d.count()),
                             (f"_rowid IN ({in_list})", lambda d: d.agg({"id": "max", "extra": "min"}).collect()),
                             (f"_rowid IN ({in_list}) AND label LIKE 's1%'", lambda d: sorted(d.select("id").collect())),
                             (f"_rowid IN ({in_list}) AND _rowid <> 42", lambda d: sorted(d.select("id").collect())),
                             ("_rowid = 17 OR _rowid = 18", lambda d: sorted(d.select("id").collect())),
                             (f"_rowid IN ({in_list})", lambda d: len(d.limit(2).collect()))]:
        for options in ({}, {"localTakeMaxRows": "0"}):
            got = tail(spark.read.format("fermion").options(**options).load(changed).where(sql_filter))
            assert got == tail(every.where(sql_filter)), (sql_filter, options, got)
    # Both lookup columns: one drives the take, the other is still evaluated by Spark.
    addr = {r.id: r._rowaddr for r in every.where("id IN (17, 42)").select("id", "_rowaddr").collect()}
    both = t.where(f"_rowid IN ({in_list}) AND _rowaddr = {addr[42]}").select("id")
    assert [r.id for r in both.collect()] == [42]
    table = f"fermion.`{changed}`"
    assert spark.sql(f"SELECT count(*) FROM {table} WHERE _rowid IN ({in_list})").collect()[0][0] == 6
    assert spark.sql(f"SELECT max(id) FROM {table} WHERE _rowaddr = {addr[17]}").collect()[0][0] == 17


def test_take_from_a_dataframe_of_ids_runs_takes_per_fragment(spark, changed):
    ds = FermionDataset(spark, changed)
    keys = spark.range(0, 7000, 7).selectExpr("id as k").union(spark.createDataFrame([(10**9,)], "k bigint"))
    got = ds.take_rows(keys, columns=["id", "extra"], id_column="k")
    base = scan(spark, changed).select("id", "extra", "_rowid")
    expected = base.join(keys, base["_rowid"] == keys["k"]).selectExpr("id", "extra")
    assert sorted((r.id, r.extra) for r in got.collect()) == sorted((r.id, r.extra) for r in expected.collect())


def test_take_from_pages_in_zstd_blocks_and_packed_pages_equals_the_scan(spark, tmp_path):
    """Large pages: strings in 1 KiB zstd blocks (`compressionBlockSize`) and vectors of floats in
    [0, 1) (FOR pages of their bits, stored uncompressed), so that a take reads only blocks and packed
    words."""
    path = str(tmp_path / "blocks")
    spark.range(0, 40000, 1, 2).selectExpr(
        "id", "if(id % 9 = 0, null, concat('row-', id, repeat('ab', cast(id % 13 as int)))) as s",
        "transform(sequence(0, 15), i -> cast(pmod(hash(id, i), 1000003) / 1000003.0 as float)) as vec",
    ).write.format("fermion").option("compressionBlockSize", "1k").save(path)
    import glob
    from fermion_spark.tools import inspect
    report = inspect(sorted(glob.glob(path + "/data/*.fermion"))[0], spark=spark)
    codecs = {}
    for c in report["columns"]:
        for st in c["streams"]:
            if st["stream_type"] == "DATA":
                codecs[st["node"]] = (st["codecs"], st["encodings"])
    assert codecs["s"][0].get("zstd-blocks", 0) + codecs["s"][0].get("zstd-primed-blocks", 0) > 0, codecs
    assert codecs["vec.element"][1].get("for", 0) > 0 and codecs["vec.element"][0].get("none", 0) > 0, codecs
    everything = scan(spark, path).orderBy("id").collect()
    rnd = random.Random(9)
    picks = [rnd.randrange(len(everything)) for _ in range(200)] + [1, 1, len(everything) - 1]
    got = FermionDataset(spark, path).take(picks, columns=["id", "s", "vec"]).collect()
    assert [(r["id"], r["s"], r["vec"]) for r in got] == \
        [(everything[p]["id"], everything[p]["s"], everything[p]["vec"]) for p in picks]


def _string_codecs(spark, path):
    import glob
    from fermion_spark.tools import inspect
    codecs = {}
    for f in glob.glob(path + "/data/*.fermion"):
        for c in inspect(f, spark=spark)["columns"]:
            for st in c["streams"]:
                if st["node"] == "s" and st["stream_type"] == "DATA":
                    for k, v in st["codecs"].items():
                        codecs[k] = codecs.get(k, 0) + v
    return codecs


def test_primed_blocks_store_text_smaller_and_a_take_equals_the_scan(spark, tmp_path):
    """Text whose words repeat across a page (like TPC-H comments): by default the blocks after a
    page's first are primed with it (zstd-primed-blocks), smaller than blocks alone
    (`compressionBlockPrime = false`); a take returns the scan's rows either way."""
    # Words of 8 hex digits from a vocabulary of 2,000: more than one 16 KiB block holds.
    df = spark.range(0, 30000, 1, 1).selectExpr(
        "id", "concat_ws(' ', transform(sequence(0, cast(pmod(id, 7) as int) + 3), "
        "i -> substr(sha2(cast(pmod(hash(id, i), 2000) as string), 256), 1, 8))) as s")
    sizes = {}
    for prime in ("true", "false"):
        path = str(tmp_path / f"prime-{prime}")
        df.write.format("fermion").option("compressionBlockPrime", prime).save(path)
        codecs = _string_codecs(spark, path)
        assert (codecs.get("zstd-primed-blocks", 0) > 0) == (prime == "true"), codecs
        sizes[prime] = spark._jvm.org.apache.hadoop.fs.Path(path + "/data").getFileSystem(
            spark._jsc.hadoopConfiguration()).getContentSummary(spark._jvm.org.apache.hadoop.fs.Path(path + "/data")).getLength()
        everything = scan(spark, path).orderBy("id").collect()
        picks = [5, 17000, 29999, 17000, 123]
        got = FermionDataset(spark, path).take(picks, columns=["id", "s"]).collect()
        assert [(r["id"], r["s"]) for r in got] == [(everything[p]["id"], everything[p]["s"]) for p in picks]
    assert sizes["true"] < sizes["false"], sizes
