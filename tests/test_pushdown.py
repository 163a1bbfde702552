"""Predicates pushed to stripe statistics: stripes are skipped (metrics say so) and results never
change (differential: pushdown on, pushdown off, Parquet), on random predicates."""
import functools
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pyspark.sql import functions as F
from conftest import batch_scans, rows_of


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("pushdown")
    df = spark.range(0, 60000, 1, 2).selectExpr(
        "id",
        "if(id % 101 = 0, null, id * 3) as k",
        "if(id % 7 = 0, null, concat('key-', lpad(cast(id as string), 6, '0'))) as s",
        "if(id % 13 = 0, double('NaN'), if(id % 17 = 0, null, cast(id as double) / 10)) as d",
        "cast(id % 5 as int) as small",
        "id % 2 = 0 as b",
        "date_add(date'2020-01-01', cast(id / 100 as int)) as day",
        "cast(id / 1000 as decimal(12, 2)) as amount")
    f, p = str(base / "f"), str(base / "p")
    # Pages of 256 rows: page statistics select rows within the 2,000-row stripes.
    df.write.format("fermion").option("stripeRows", "2000").option("pageRows", "256").save(f)
    df.write.parquet(p)
    return f, p


def scan_metrics(df):
    plan = df._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    scan = leaves.head()
    m = scan.metrics()
    return m.apply("stripesSkipped").value(), m.apply("stripesRead").value(), m.apply("fermionBytesRead").value()


def metric(df, name):
    return df._jdf.queryExecution().executedPlan().collectLeaves().head().metrics().apply(name).value()


def ids(df):
    return sorted(r[0] for r in df.select("id").collect())


COLUMNS = {
    "id": st.integers(-10, 60010).map(str),
    "k": st.integers(-10, 180030).map(str),
    "s": st.integers(0, 60000).map(lambda i: f"'key-{i:06d}'"),
    "d": st.one_of(st.sampled_from(["double('NaN')", "0.0", "-0.0"]), st.floats(-10, 6010, allow_nan=False).map(repr)),
    "small": st.integers(-1, 6).map(str),
    "day": st.integers(0, 700).map(lambda n: f"date_add(date'2020-01-01', {n})"),
    "amount": st.integers(0, 6100).map(lambda n: f"cast({n / 100} as decimal(12, 2))"),
}


def test_null_safe_equality_under_not_keeps_null_rows(spark, tmp_table):
    # NOT (k <=> 0) holds where k is null (k <=> 0 is false there, not null): pushed down, neither
    # the row filter nor stripe statistics (a stripe of nulls only) may drop those rows.
    path = tmp_table()
    spark.range(0, 3000, 1, 1).selectExpr("id", "if(id % 101 = 0 or id >= 2000, null, id * 3) as k") \
        .write.format("fermion").option("stripeRows", "1000").option("pageRows", "256").save(path)
    df = spark.read.format("fermion").load(path)
    cases = [
        ("id < 3 and not (k <=> 0)", [0, 1, 2]),
        ("id < 3 and not (k <=> 3)", [0, 2]),
        ("not (k <=> 0) and id >= 2990", list(range(2990, 3000))),
        ("id < 3 and (k <=> 0)", []),
        ("id < 3 and not (0 <=> k)", [0, 1, 2]),
    ]
    # One job for all cases: each scan keeps its own pushdown.
    tagged = [df.where(pred).select(F.lit(i).alias("case"), "id") for i, (pred, _) in enumerate(cases)]
    got = {i: [] for i in range(len(cases))}
    for r in functools.reduce(lambda a, b: a.unionAll(b), tagged).collect():
        got[r.case].append(r.id)
    for i, (pred, want) in enumerate(cases):
        assert sorted(got[i]) == want, pred


@st.composite
def predicates(draw, depth=2):
    if depth == 0 or draw(st.booleans()):
        col = draw(st.sampled_from(sorted(COLUMNS)))
        kind = draw(st.sampled_from(["cmp", "cmp", "in", "null", "prefix"]))
        if kind == "null":
            return f"{col} is {draw(st.sampled_from(['', 'not ']))}null"
        if kind == "in":
            return f"{col} in ({', '.join(draw(st.lists(COLUMNS[col], min_size=1, max_size=3)))})"
        if kind == "prefix":
            return f"s like 'key-{draw(st.integers(0, 600)):03d}%'"
        return f"{col} {draw(st.sampled_from(['=', '<>', '<', '<=', '>', '>=', '<=>']))} {draw(COLUMNS[col])}"
    op = draw(st.sampled_from(["and", "or", "not"]))
    if op == "not":
        return f"not ({draw(predicates(depth - 1))})"
    return f"({draw(predicates(depth - 1))}) {op} ({draw(predicates(depth - 1))})"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pred=predicates())
def test_random_predicates_same_results(spark, table, pred):
    f, p = table
    on = spark.read.format("fermion").load(f).where(pred)
    off = spark.read.format("fermion").option("filterPushdown", "false").load(f).where(pred)
    parquet = spark.read.parquet(p).where(pred)
    # The three reads run as one job (each scan keeps its own pushdown): a job per read made this
    # test one of the slowest of the suite.
    tagged = [df.select(F.lit(i).alias("read"), "id") for i, df in enumerate((on, off, parquet))]
    got = {0: [], 1: [], 2: []}
    for r in functools.reduce(lambda a, b: a.unionAll(b), tagged).collect():
        got[r.read].append(r.id)
    expected = sorted(got[2])
    assert sorted(got[0]) == expected, pred
    assert sorted(got[1]) == expected, pred


def test_selective_filters_skip_stripes_and_bytes(spark, table):
    f, _ = table
    # A small tail prefetch, so that opening the (small) files does not read them whole.
    point = spark.read.format("fermion").option("tailPrefetchBytes", "16k").load(f).where("id = 31337").select("id", "s")
    assert [r.id for r in point.collect()] == [31337]  # runs this DataFrame's own plan
    skipped, read, point_bytes = scan_metrics(point)
    assert read == 1 and skipped == 29, (skipped, read)
    full = spark.read.format("fermion").option("filterPushdown", "false").option("tailPrefetchBytes", "16k").load(f) \
        .where("id = 31337").select("id", "s")
    assert [r.id for r in full.collect()] == [31337]
    _, read_all, full_bytes = scan_metrics(full)
    # Data bytes (metadata reads are the same both ways: the files' tails and CMBs).
    point_data = point_bytes - metric(point, "fermionMetadataBytesRead")
    full_data = full_bytes - metric(full, "fermionMetadataBytesRead")
    assert read_all == 30 and point_data * 5 < full_data, (point_data, full_data)
    prefix = spark.read.format("fermion").load(f).where("s like 'key-0123%'").select("id")
    assert sorted(r.id for r in prefix.collect()) == [i for i in range(12300, 12400) if i % 7]
    assert scan_metrics(prefix)[1] <= 2


def test_decode_metrics_and_limit_pushdown(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 200_000, 1, 2).selectExpr("id", "cast(id as string) as s").write.format("fermion") \
        .option("stripeRows", "10000").save(path)
    df = spark.read.format("fermion").load(path).select("id", "s")
    df.collect()
    scan = df._jdf.queryExecution().executedPlan().collectLeaves().head()
    m = scan.metrics()
    pages = m.apply("pagesDecoded").value()
    assert pages >= 20 * 3, pages  # 20 stripes, each with DATA of id and OFFSETS and DATA of s
    assert m.apply("fermionMetadataBytesRead").value() > 0
    assert m.apply("decodeTimeMs").value() >= 0
    limited = spark.read.format("fermion").load(path).limit(7)
    assert "Limit: 7" in limited._jdf.queryExecution().executedPlan().toString()
    assert len(limited.collect()) == 7
    assert spark.read.format("fermion").load(path).limit(150_000).count() == 150_000


def test_bloom_filters_skip_stripes_for_point_lookups_on_unsorted_keys(spark, tmp_table):
    f, p = tmp_table("f"), tmp_table("p")
    df = spark.range(0, 100_000, 1, 1).selectExpr("id", "xxhash64(id) as k", "concat('n', xxhash64(id)) as s", "rand(1) as x")
    df.write.format("fermion").option("stripeRows", "5000").option("bloomFilterColumns", "k,s").save(f)
    df.write.parquet(p)
    probe = df.where("id = 4242").collect()[0]
    for cond in (f"k = {probe.k}", f"s = '{probe.s}'", f"k in ({probe.k}, 1, 2)", "k = 12345"):
        got = spark.read.format("fermion").load(f).where(cond)
        assert rows_of(got) == rows_of(spark.read.parquet(p).where(cond)), cond
        skipped, read, _ = scan_metrics(got)
        assert read <= 2 and skipped >= 18, (cond, skipped, read)
    plain = tmp_table("plain")
    df.write.format("fermion").option("stripeRows", "5000").save(plain)
    q = spark.read.format("fermion").load(plain).where(f"k = {probe.k}")
    q.collect()
    assert scan_metrics(q)[0] == 0, "without bloom filters random keys skip nothing"
    with pytest.raises(Exception, match="bloomFilterColumns"):
        df.write.format("fermion").option("bloomFilterColumns", "nope").save(tmp_table())
    # Per column: a filter for k only, at a lower false-positive rate (a larger filter).
    sizes = {}
    for fpp in ("0.1", "0.001"):
        per = tmp_table("per")
        df.write.format("fermion").option("stripeRows", "5000").option("column.k.bloomFilter", "true") \
            .option("column.k.bloomFilterFpp", fpp).save(per)
        q = spark.read.format("fermion").load(per).where(f"k = {probe.k}")
        assert [r.id for r in q.collect()] == [4242]
        assert scan_metrics(q)[0] >= 17, scan_metrics(q)
        sizes[fpp] = sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(os.path.join(per, "data")) for n in names)
    assert sizes["0.001"] > sizes["0.1"] + 20 * 5000 // 8, sizes
    with pytest.raises(Exception, match="(?i)column.x.bloomFilterFpp"):
        df.write.format("fermion").option("column.x.bloomFilterFpp", "2").save(tmp_table())
    with pytest.raises(Exception, match="cannot have a bloom filter"):
        spark.range(3).selectExpr("array(id) as a").write.format("fermion").option("column.a.bloomFilter", "true").save(tmp_table())


def test_page_statistics_skip_pages_and_never_change_rows(spark, tmp_table):
    from fermion_spark.dataset import FermionDataset
    f, p = tmp_table("f"), tmp_table("p")
    df = spark.range(0, 40000, 1, 1).selectExpr(
        "id",
        "cast(rand(7) * 1e9 as bigint) as r",
        "if(id % 11 = 0, null, concat('v', cast(id * 7 % 1000 as string))) as s",
        "id % 3 = 0 as b",
        "cast(id / 7 as decimal(10, 2)) as amount",
        "named_struct('x', id, 'y', cast(id as string)) as st",
        "array(id, id + 1) as arr")
    df.write.format("fermion").option("stripeRows", "20000").option("pageRows", "512").save(f)
    df.write.parquet(p)
    preds = ["id between 12345 and 12400", "id = 30001 or id = 5", "id < 100 or (id > 39000 and b)",
             "s = 'v7' and id < 20000", "id >= 15000 and id < 15010 and r is not null", "id in (1, 7777, 39999)"]
    for pred in preds:
        on = spark.read.format("fermion").load(f).where(pred)
        off = spark.read.format("fermion").option("filterPushdown", "false").load(f).where(pred)
        expected = rows_of(spark.read.parquet(p).where(pred))
        assert rows_of(on) == expected, pred
        assert rows_of(off) == expected, pred
    # A small tail prefetch: the whole (small) file would otherwise arrive with its footer.
    q = spark.read.format("fermion").option("tailPrefetchBytes", "16k").load(f).where("id between 12345 and 12400") \
        .select("id", "r", "s", "_rowaddr")
    got = q.collect()
    assert sorted(r.id for r in got) == list(range(12345, 12401))
    # _rowaddr still names each row's position in its fragment.
    assert all(r._rowaddr & 0xFFFFFFFF == r.id for r in got)
    assert metric(q, "pagesSkipped") > 50, metric(q, "pagesSkipped")
    whole = spark.read.format("fermion").option("filterPushdown", "false").option("tailPrefetchBytes", "16k").load(f) \
        .where("id between 12345 and 12400").select("id", "r", "s")
    whole.collect()

    def data_bytes(d):
        return metric(d, "fermionBytesRead") - metric(d, "fermionMetadataBytesRead")
    assert data_bytes(q) * 8 < data_bytes(whole), (data_bytes(q), data_bytes(whole))
    # Deleted rows stay deleted inside selected pages.
    FermionDataset(spark, f).delete("id % 2 = 0 and id between 12345 and 12400")
    after = spark.read.format("fermion").load(f).where("id between 12345 and 12400").select("id").collect()
    assert sorted(r.id for r in after) == [i for i in range(12345, 12401) if i % 2]


def test_late_materialization_reads_other_columns_only_where_the_filter_matches(spark, tmp_table):
    f = tmp_table()
    df = spark.range(0, 50000, 1, 1).selectExpr(
        "id", "cast(rand(3) * 1e12 as bigint) as u", "uuid(5) as payload", "rand(4) as x")
    df.write.format("fermion").option("stripeRows", "50000").option("pageRows", "1024").save(f)
    probe = spark.read.format("fermion").load(f).where("id = 31234").collect()[0].u

    def run(pushdown):
        q = spark.read.format("fermion").option("filterPushdown", pushdown).option("tailPrefetchBytes", "16k").load(f) \
            .where(f"u = {probe}").select("id", "u", "payload", "x")
        rows = q.collect()
        return rows, metric(q, "fermionBytesRead") - metric(q, "fermionMetadataBytesRead"), metric(q, "pagesSkipped")

    rows, data_bytes, skipped = run("true")
    whole_rows, whole_bytes, _ = run("false")
    assert [r.id for r in rows] == [31234] and rows == whole_rows
    # u is random, so page statistics cannot narrow it; evaluating u = probe on u's decoded pages
    # leaves one row, and only one page of each other column is read.
    assert skipped >= 3 * 45, skipped
    assert data_bytes * 2 < whole_bytes, (data_bytes, whole_bytes)


def test_runtime_filters_skip_stripes_of_sorted_keys_by_the_join_keys(spark, tmp_table):
    # A fact table sorted by its key and a dimension whose filter keeps a narrow band of keys: with
    # runtimeFilters the join's keys reach the fact scan (dynamic pruning) and the stripes without
    # them are skipped; the answers equal Parquet's and those without the option.
    facts, dims, pfacts, pdims = tmp_table("facts"), tmp_table("dims"), tmp_table("pfacts"), tmp_table("pdims")
    fact_rows = spark.range(0, 120_000, 1, 2).selectExpr("id AS day_key", "id % 13 AS store", "id * 0.5D AS amount")
    dim_rows = spark.range(0, 4000).selectExpr("id * 30 AS day_key", "cast(id / 400 AS int) AS year")
    fact_rows.write.format("fermion").option("stripeRows", "4000").save(facts)
    dim_rows.write.format("fermion").save(dims)
    fact_rows.write.parquet(pfacts)
    dim_rows.write.parquet(pdims)
    spark.sql(f"CREATE TABLE rf_facts USING fermion OPTIONS (runtimeFilters 'true') LOCATION '{facts}'")
    try:
        spark.read.format("fermion").load(dims).createOrReplaceTempView("rf_dims")
        spark.read.format("fermion").load(facts).createOrReplaceTempView("rf_facts_plain")
        spark.read.parquet(pfacts).createOrReplaceTempView("rf_pfacts")
        spark.read.parquet(pdims).createOrReplaceTempView("rf_pdims")
        query = ("SELECT f.store, count(*) AS n, sum(f.amount) AS total FROM {f} f JOIN {d} d ON f.day_key = d.day_key "
                 "WHERE d.year = 3 GROUP BY f.store")
        got = spark.sql(query.format(f="rf_facts", d="rf_dims"))
        assert rows_of(got) == rows_of(spark.sql(query.format(f="rf_pfacts", d="rf_pdims")))
        assert rows_of(got) == rows_of(spark.sql(query.format(f="rf_facts_plain", d="rf_dims")))
        plan = got._jdf.queryExecution().executedPlan().toString()
        assert "dynamicpruning" in plan, plan
        # Keys 36,000 to 47,970 of 120,000, in stripes of 4,000 rows: 3 of 30 stripes read.
        scans = [s for s in batch_scans(got) if "facts" in s.scan().description()]
        read = sum(s.metrics().apply("stripesRead").value() for s in scans)
        assert read == 3, read
        plain = spark.sql(query.format(f="rf_facts_plain", d="rf_dims"))
        plain.collect()
        assert "dynamicpruning" not in plain._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.sql("DROP TABLE IF EXISTS rf_facts")



def test_filter_estimate_sizes_a_filtered_join_side_by_its_kept_rows(spark, tmp_table):
    # Spark plans joins from the scans' sizes and, without column statistics, ignores the filters:
    # a Fermion scan reports at most the size in memory of the rows its pushed filter keeps (the
    # share on a sample), so a side that keeps 1 row in 50 is broadcast (the physical plan before
    # adaptive execution shows the planner's choice). SQL OPTIONS (filterEstimate 'false') keeps the
    # whole read's size: the files' share, 3.4 MiB here (hashes do not compress), on both sides.
    facts, others = tmp_table("est_facts"), tmp_table("est_others")
    spark.range(0, 200_000, 1, 2).selectExpr("id * 7919 % 200000 AS k", "id % 50 AS m",
                                             "sha2(cast(id AS string), 256) AS s") \
        .write.format("fermion").option("stripeRows", "5000").save(facts)
    spark.range(0, 200_000, 1, 2).selectExpr("id AS k", "id % 7 AS g", "sha2(cast(id AS string), 256) AS pad") \
        .write.format("fermion").save(others)
    spark.read.format("fermion").load(others).createOrReplaceTempView("fe_others")
    spark.sql(f"CREATE TEMPORARY VIEW fe_facts USING fermion OPTIONS (path '{facts}')")
    spark.sql(f"CREATE TEMPORARY VIEW fe_facts_whole USING fermion OPTIONS (path '{facts}', filterEstimate 'false')")
    query = ("SELECT o.g, count(*) AS n, sum(f.k) AS total FROM {f} f JOIN fe_others o ON f.k = o.k "
             "WHERE f.m = 3 GROUP BY o.g")
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(1 << 20))
    try:
        estimated = spark.sql(query.format(f="fe_facts"))
        whole = spark.sql(query.format(f="fe_facts_whole"))
        assert rows_of(estimated) == rows_of(whole)
        assert sum(r["n"] for r in estimated.collect()) == 4000
        plan = estimated._jdf.queryExecution().sparkPlan().toString()
        plan_whole = whole._jdf.queryExecution().sparkPlan().toString()
        assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan, plan
        assert "SortMergeJoin" in plan_whole and "BroadcastHashJoin" not in plan_whole, plan_whole
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def test_not_in_is_pushed_and_answers_as_parquet(spark, tmp_table):
    # NOT IN reaches the scan as a negated IN, which null rows fail (SQL: NULL NOT IN (...) is NULL):
    # rows equal Parquet's for integers, dates, decimals, doubles (NaN, -0.0) and strings, with nulls,
    # under OR and AND, and under an aggregate, where the scan decides the filter itself.
    f, p = tmp_table("notin"), tmp_table("notin_parquet")
    doubles = [0.0, -0.0, 1.5, float("nan"), None, 2.25]
    df = spark.createDataFrame(
        [(i, None if i % 7 == 0 else i % 10, None if i % 5 == 0 else f"w{i % 6}", doubles[i % len(doubles)])
         for i in range(2000)], "id INT, k BIGINT, s STRING, x DOUBLE") \
        .selectExpr("*", "date_add(date'2020-01-01', cast(k AS INT)) AS d", "cast(k AS DECIMAL(10, 2)) AS m")
    df.coalesce(1).write.format("fermion").option("stripeRows", "500").save(f)
    df.write.parquet(p)
    cases = ["k NOT IN (1, 2, 3)", "s NOT IN ('w1', 'w2')", "x NOT IN (1.5, double('NaN'))", "x NOT IN (0.0)",
             "d NOT IN (date'2020-01-02')", "m NOT IN (3.00, 4.00)", "k NOT IN (1) OR s IS NULL",
             "NOT (k IN (1, 2) OR s IN ('w3'))", "k NOT IN (1, 2, 3, 4, 5, 6, 7, 8, 9) AND id < 500"]
    agg = ["count(*) AS n", "sum(id) AS total"]
    for where in cases:
        got = spark.read.format("fermion").load(f).where(where)
        expected = spark.read.parquet(p).where(where)
        assert rows_of(got) == rows_of(expected) and len(rows_of(expected)) > 0, where
        assert rows_of(got.selectExpr(*agg)) == rows_of(expected.selectExpr(*agg)), where
    plan = spark.read.format("fermion").load(f).where("k NOT IN (1, 2)")._jdf.queryExecution().executedPlan().toString()
    assert "Not(In(k," in plan, plan


def test_filters_keeping_few_or_all_rows_are_taken_over_exactly(spark, tmp_table):
    # A filter the scan evaluates exactly and that keeps at most 1 row in 16 (estimated on a sample)
    # or every row is taken over by the scan of a table too large to be broadcast whole (here: with
    # broadcasts off): Spark plans no Filter above it and reads neither the filter-only column. One
    # keeping half the rows is left to Spark (cutting them out would copy most rows), as is every
    # filter with filterEstimate off, and a LIKE with a `_` wildcard, which Spark keeps for itself.
    f, p = tmp_table("exact"), tmp_table("exact_parquet")
    df = spark.range(0, 40_000, 1, 2).selectExpr(
        "id", "if(id < 0, null, id % 50) AS rare", "id % 2 AS half", "concat('v', cast(id * 7 % 1000 AS string)) AS s")
    df.write.format("fermion").option("stripeRows", "5000").save(f)
    df.write.parquet(p)

    def planned(fmt, where, **options):
        reader = spark.read.format(fmt)
        for k, v in options.items():
            reader = reader.option(k, v)
        q = reader.load(f if fmt == "fermion" else p).where(where).select("id", "s")
        rows = rows_of(q)
        plan = q._jdf.queryExecution().executedPlan().toString()
        read = list(batch_scans(q)[0].scan().readSchema().fieldNames()) if fmt == "fermion" else None
        # FilterExec, not the scan's own "StripeFilter:"
        return rows, re.search(r"\bFilter\b", plan) is not None, read

    cases = [  # predicate, options, Spark keeps a Filter, columns the scan reads
        ("rare = 3", {}, False, ["id", "s"]),
        ("rare IN (3, 4) AND s >= 'v5'", {}, False, ["id", "s"]),
        ("rare IS NOT NULL", {}, False, ["id", "s"]),
        ("half = 1", {}, True, ["id", "s", "half"]),
        ("rare = 3", {"filterEstimate": "false"}, True, ["id", "s", "rare"]),
        ("rare = 3 AND s LIKE '%9%1%'", {}, False, ["id", "s"]),  # a LIKE Spark cannot push: Fermion's
        ("rare = 3 AND s LIKE '%9_1%'", {}, True, ["id", "s"]),  # with `_`: Spark's own LIKE
        ("rare = 3 AND s LIKE '%9%1%'", {"filterEstimate": "false"}, True, ["id", "s", "rare"]),
        ("rare = 3 AND s LIKE '%9%'", {}, False, ["id", "s"]),  # CONTAINS
        ("s LIKE '%99'", {}, False, ["id", "s"]),  # ENDS_WITH, 1 % kept
        ("rare = 3 AND s NOT LIKE '%99'", {}, False, ["id", "s"]),  # a negated ENDS_WITH
        (f"rare NOT IN ({', '.join(map(str, range(49)))}) AND s NOT IN ('v7', 'v21')", {}, False, ["id", "s"]),
    ]
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    try:
        # The table is small enough to be broadcast whole: under the default threshold it keeps
        # Spark's Filter (from which Spark plans dynamic pruning when it is a join's filtered side).
        rows, has_filter, read = planned("fermion", "rare = 3")
        assert rows == planned("parquet", "rare = 3")[0] and has_filter and "rare" in read
        # Null checks alone are not selective to Spark: taken over even there.
        rows, has_filter, read = planned("fermion", "rare IS NOT NULL")
        assert rows == planned("parquet", "rare IS NOT NULL")[0] and not has_filter and "rare" not in read
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        for where, options, filtered, columns in cases:
            rows, has_filter, read = planned("fermion", where, **options)
            expected, _, _ = planned("parquet", where)
            assert rows == expected and len(rows) > 0, where
            assert has_filter == filtered, (where, options)
            assert sorted(read) == sorted(columns), (where, read)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def test_string_matches_are_pushed_and_answer_as_parquet(spark, tmp_table):
    # LIKE '%x', LIKE '%x%' and endswith/contains reach the scan as ENDS_WITH and CONTAINS: rows equal
    # Parquet's for multi-byte characters, escaped wildcards, the empty pattern, nulls and NOT (a
    # negated match, which null rows fail too), and the scan skips stripes of nulls only.
    f, p = tmp_table("matches"), tmp_table("matches_parquet")
    words = ["abc", "xyzabc", "ABC", "", "straße", "日本語テキスト", "abc%def", "a_b", "ab", "テキスト日本"]
    df = spark.createDataFrame(
        [(i, None if i % 11 == 0 else words[i % len(words)] + ("" if i % 3 else str(i % 7))) for i in range(3000)],
        "id INT, s STRING")
    df = df.union(spark.createDataFrame([(3000 + i, None) for i in range(1000)], "id INT, s STRING"))
    df.coalesce(1).write.format("fermion").option("stripeRows", "1000").save(f)
    df.write.parquet(p)
    cases = ["s LIKE '%abc'", "s LIKE '%abc%'", "s LIKE '%ß%'", "s LIKE '%テキスト'", "s LIKE '%日本%'",
             "s LIKE '%\\%%'", "s LIKE '%\\_b'", "endswith(s, 'c3')", "contains(s, '')", "contains(s, 'zz')",
             "NOT (s LIKE '%abc%')", "s NOT LIKE 'abc%'", "NOT endswith(s, 'c3') OR id < 10",
             "NOT (s LIKE '%abc' OR s IS NULL)", "s LIKE '%abc' OR s IS NULL", "s LIKE '%b%' AND id < 100"]
    for where in cases:
        got = rows_of(spark.read.format("fermion").load(f).where(where))
        expected = rows_of(spark.read.parquet(p).where(where))
        assert got == expected, where
        # under an aggregate the scan decides the filter itself (3.16): counts and sums as Parquet's
        agg = ["count(*) AS n", "sum(id) AS total", "count(s) AS named"]
        assert rows_of(spark.read.format("fermion").load(f).where(where).selectExpr(*agg)) == \
            rows_of(spark.read.parquet(p).where(where).selectExpr(*agg)), where
    assert len(rows_of(spark.read.parquet(p).where("s LIKE '%テキスト'"))) > 0
    # The pattern is pushed (shown by its text), and the last stripe (nulls only) is skipped.
    q = spark.read.format("fermion").load(f).where("s LIKE '%abc'")
    assert "EndsWith(s,abc)" in q._jdf.queryExecution().executedPlan().toString()
    q.collect()
    skipped, read, _ = scan_metrics(q)
    assert (skipped, read) == (1, 3)
    # NOT LIKE is pushed as the negated match; null rows fail it, so the stripe of nulls is skipped too.
    q = spark.read.format("fermion").load(f).where("s NOT LIKE '%abc'")
    assert "Not(EndsWith(s,abc))" in q._jdf.queryExecution().executedPlan().toString()
    q.collect()
    skipped, read, _ = scan_metrics(q)
    assert (skipped, read) == (1, 3)


def test_like_patterns_spark_cannot_push_are_evaluated_by_the_scan_as_parquet_answers(spark, tmp_table):
    # A LIKE Spark leaves as a regular expression ('%a%b%', 'a%b%c') reaches a Fermion scan as a
    # function (PushLikePatterns) and is tested on the values' bytes: rows equal Parquet's for
    # multi-byte characters, escaped wildcards and an ESCAPE clause, parts that overlap, newlines,
    # nulls, NOT LIKE, OR and AND, on stored and on partition columns. Taken over where broadcasts
    # are off (no Filter, the column not read), evaluated by Spark as the same function with
    # pushdown off; a table small enough to be broadcast, and a pattern with `_`, keep Spark's LIKE.
    f, p = tmp_table("likes"), tmp_table("likes_parquet")
    words = ["special requests", "special pending requests", "requests special", "straße 日本 straße",
             "a%b_c\\d", "aXaXa", "a\nmid\nb", "", "ab", "speci requests special"]
    df = spark.createDataFrame(
        [(i, None if i % 11 == 0 else words[i % len(words)] + ("" if i % 3 else f" {i % 7}"), f"k{i % 2}x{i % 3}")
         for i in range(3000)], "id INT, s STRING, k STRING")
    df.coalesce(1).write.format("fermion").option("stripeRows", "1000").partitionBy("k").save(f)
    df.write.partitionBy("k").parquet(p)
    cases = ["s LIKE '%special%requests%'", "s NOT LIKE '%special%requests%'", "s LIKE '%ß%日本%'",
             "s LIKE 'a%a%'", "s LIKE '%a%a%a%'", "s LIKE 'a\\\\%%\\\\_c%'", "s LIKE 'a!%b%c%' ESCAPE '!'",
             "s LIKE '%mid%b%'", "s LIKE 'sp%re%ts'", "s LIKE '%special%requests%' OR id < 5",
             "NOT (s LIKE '%re%ts' AND id > 100)", "s LIKE '%a%b_c%'", "k LIKE '%1%2'", "k NOT LIKE 'k%x%0'"]
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    try:
        def answers(reader):
            # every case in one job (each scan keeps its own pushdown): rows tagged by case
            table = reader()
            tagged = [table.where(w).select(F.lit(i).alias("case"), "id", "s", "k") for i, w in enumerate(cases)]
            got = {i: [] for i in range(len(cases))}
            for r in functools.reduce(lambda a, b: a.unionAll(b), tagged).collect():
                got[r.case].append((r.id, r.s, r.k))
            return {i: sorted(v, key=repr) for i, v in got.items()}

        # a table too large to be broadcast (a small one keeps Spark's own LIKE, below)
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        expected = answers(lambda: spark.read.parquet(p))
        # with pushdown off Spark evaluates the function itself
        for reader in (lambda: spark.read.format("fermion").load(f),
                       lambda: spark.read.format("fermion").option("filterPushdown", "false").load(f)):
            got = answers(reader)
            for i, where in enumerate(cases):
                assert got[i] == expected[i] and len(expected[i]) > 0, where
        q = spark.read.format("fermion").load(f).where(cases[1]).select("id")
        plan = q._jdf.queryExecution().executedPlan().toString()
        assert "Not(Like(s,%special%requests%))" in plan, plan
        assert re.search(r"\bFilter\b", plan) is None and list(batch_scans(q)[0].scan().readSchema().fieldNames()) == ["id"]
        # pushdown off, on a table too large to be broadcast: Spark evaluates the function itself
        plan = spark.read.format("fermion").option("filterPushdown", "false").load(f).where(cases[0]) \
            ._jdf.queryExecution().executedPlan().toString()
        assert re.search(r"Filter .*fermion_like", plan), plan
        # A table small enough to be broadcast keeps Spark's own LIKE (from which Spark plans
        # dynamic pruning of a join's other side)
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
        plan = spark.read.format("fermion").load(f).where(cases[0])._jdf.queryExecution().executedPlan().toString()
        assert "fermion_like" not in plan and " LIKE " in plan, plan
        plan = spark.read.format("fermion").load(f).where("s LIKE '%a%b_c%'")._jdf.queryExecution().executedPlan().toString()
        assert "Like(" not in plan and " LIKE " in plan, plan
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


@pytest.fixture(scope="module")
def like_table(spark, tmp_path_factory):
    # Short strings of a few letters, multi-byte characters and the wildcard and escape characters
    # themselves (nulls among them), so that random patterns match some rows and miss others.
    import random
    rnd = random.Random(3)
    letters = ["a", "b", "ß", "日", "%", "_", "\\"]
    rows = [(i, None if i % 17 == 0 else "".join(rnd.choice(letters) for _ in range(rnd.randint(0, 6))))
            for i in range(3000)]
    df = spark.createDataFrame(rows, "id INT, s STRING")
    base = tmp_path_factory.mktemp("likes")
    f, p = str(base / "f"), str(base / "p")
    df.coalesce(1).write.format("fermion").option("stripeRows", "500").option("pageRows", "128").save(f)
    df.write.parquet(p)
    # read once (a Parquet read infers its schema each time): the tables, as Fermion reads them
    # (pushdown on and off) and as Parquet
    return (spark.read.format("fermion").load(f), spark.read.format("fermion").option("filterPushdown", "false").load(f),
            spark.read.parquet(p))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.sampled_from(["a", "b", "ß", "日", "%", "%", "_", "\\%", "\\_", "\\\\"]), max_size=6),
       negated=st.booleans())
def test_random_like_patterns_same_results(spark, like_table, tokens, negated):
    # Any LIKE pattern (wildcards, escaped wildcards, multi-byte characters), as a Fermion scan
    # evaluates it (taken over: broadcasts off, so the table counts as large), as Spark evaluates
    # the pushed function (pushdown off) and as Spark evaluates LIKE over Parquet: the same rows.
    pattern = "".join(tokens)
    cond = F.col("s").like(pattern)
    if negated:
        cond = ~cond
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        tagged = [df.where(cond).select(F.lit(i).alias("read"), "id") for i, df in enumerate(like_table)]
        got = {0: [], 1: [], 2: []}
        for r in functools.reduce(lambda a, b: a.unionAll(b), tagged).collect():
            got[r.read].append(r.id)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
    expected = sorted(got[2])
    assert sorted(got[0]) == expected, (pattern, negated)
    assert sorted(got[1]) == expected, (pattern, negated)
