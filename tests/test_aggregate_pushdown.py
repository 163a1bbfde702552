"""Aggregates computed in the scan (aggregatePushdown): every answer equal to Parquet's and to the
same Fermion table read without the push-down, on random GROUP BY / WHERE / aggregate queries over
nulls, wide decimals, strings, dates; overflow raises as Spark raises; the plan says what was pushed."""
import random
import re
from decimal import Decimal

import pytest
from pyspark.errors import PySparkException
from py4j.protocol import Py4JJavaError


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("aggpush")
    df = spark.range(0, 30000, 1, 3).selectExpr(
        "id",
        "if(id % 11 = 0, null, cast(id % 5 as int)) as k",
        "cast(id % 3 as tinyint) as small",
        "if(id % 13 = 0, null, concat('g', cast(id % 4 as string))) as s",
        "if(id % 7 = 0, null, cast((id * 37 % 100000) / 100 as decimal(15, 2))) as price",
        "cast((id % 11) / 100 as decimal(15, 2)) as disc",
        "if(id % 17 = 0, null, cast(id * 123456789012345 as decimal(38, 6))) as wide",
        "cast(id % 9 as decimal(3, 1)) as tiny",
        "date_add(date'1995-01-01', cast(id % 900 as int)) as day",
        "id * 3 - 45000 as n",
        "if(id % 19 = 0, null, cast(id as double) / 8) as x",
        "id % 2 = 0 as flag")
    f, p, off = str(base / "f"), str(base / "p"), str(base / "f")
    df.write.format("fermion").option("stripeRows", "4000").save(f)
    df.write.parquet(p)
    spark.read.format("fermion").load(f).createOrReplaceTempView("agg_f")
    spark.read.format("fermion").option("aggregatePushdown", "false").load(off).createOrReplaceTempView("agg_off")
    spark.read.parquet(p).createOrReplaceTempView("agg_p")
    return f, p


# Spark's Filter operator in a plan (not the scan's "StripeFilter:").
SPARK_FILTER = re.compile(r"\bFilter ")


def plan_of(df):
    return df._jdf.queryExecution().executedPlan().toString()


def rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


VALUES = ["price", "disc", "wide", "tiny", "n", "k", "small", "x",
          "price * (1 - disc)", "price * (1 - disc) * (1 + disc)", "price * disc", "n * 2", "-price", "n + k",
          "cast(k as bigint) + n", "wide - price", "tiny * tiny", "k * small"]
FUNCTIONS = ["sum({})", "count({})", "min({})", "max({})", "avg({})"]
GROUPS = ["k", "s", "small", "day", "flag", "tiny"]
PREDICATES = ["day <= date'1996-06-01'", "day > date'1995-05-03'", "disc between 0.03 and 0.05", "k < 3",
              "s = 'g1'", "s in ('g0', 'g2')", "price > 100", "n >= 0", "k is null", "s is not null",
              "(k = 1 or s = 'g3')", "not (k = 2)", "small = 1", "flag", "x < 1000.5", "tiny >= 4.0",
              "substring(s, 1, 2) in ('g1', 'g2')", "substring(s, 1, 1) = 'g'", "substring(s, 1, 3) = 'g1'"]


def random_query(rnd, table):
    groups = rnd.sample(GROUPS, rnd.randint(0, 2))
    aggs = []
    for _ in range(rnd.randint(1, 4)):
        f = rnd.choice(FUNCTIONS)
        v = rnd.choice(VALUES)
        if v == "x" and f.startswith(("min", "max")):
            v = "price"
        aggs.append(f.format(v))
    if rnd.random() < 0.2:
        aggs.append("count(*)")
    where = rnd.sample(PREDICATES, rnd.randint(0, 3))
    text = f"select {', '.join(groups + aggs)} from {table}"
    if where:
        text += " where " + " and ".join(where)
    if groups:
        text += " group by " + ", ".join(groups)
    return text


def close(a, b):
    """Rows equal, doubles (sums of x) within rounding: the scan adds them in another order."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for va, vb in zip(ra, rb):
            if isinstance(va, float) and isinstance(vb, float):
                if abs(va - vb) > 1e-9 * max(1.0, abs(va), abs(vb)):
                    return False
            elif va != vb:
                return False
    return True


def test_random_aggregate_queries_match_parquet_and_the_rows(spark, tables):
    rnd = random.Random(7)
    pushed = 0
    for i in range(30):
        q = random_query(rnd, "agg_f")
        df = spark.sql(q)
        plan = plan_of(df)
        got = rows(df)
        ref = rows(spark.sql(q.replace("agg_f", "agg_p")))
        off = rows(spark.sql(q.replace("agg_f", "agg_off")))
        assert close(got, ref), f"query {i}: {q}\n{plan}\n{got[:4]}\n{ref[:4]}"
        assert close(off, ref), q
        if "Aggregates:" in plan:
            pushed += 1
            assert "HashAggregate" in plan or "SortAggregate" in plan or "ObjectHashAggregate" in plan
    assert pushed >= 20, f"only {pushed} of 30 queries were computed in the scan"


def test_tpch_shapes_are_computed_in_the_scan(spark, tables):
    q1 = ("select s, flag, sum(tiny), sum(price), sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + disc)), "
          "avg(tiny), avg(price), avg(disc), count(*) from {} where day <= date'1997-01-01' - interval '90' day "
          "group by s, flag order by s, flag")
    q6 = ("select sum(price * disc) from {} where day >= date'1995-02-01' and day < date'1995-02-01' + interval '1' year "
          "and disc between 0.06 - 0.01 and 0.06 + 0.01 and tiny < 5")
    for q in (q1, q6):
        df = spark.sql(q.format("agg_f"))
        plan = plan_of(df)
        assert "Aggregates:" in plan, plan
        # Spark keeps no filter of its own above the scan: the scan evaluated the predicates.
        assert not SPARK_FILTER.search(plan), plan
        assert df.collect() == spark.sql(q.format("agg_p")).collect()


def test_a_correlated_subquerys_aggregate_is_computed_in_the_scan(spark, tables):
    """TPC-H Q17's shape: Spark plans the subquery's scan alone, then joins its aggregate into the
    query; the scan is planned again under the aggregate, which it then computes."""
    q = ("select sum(price) from {0} t1 where price < (select 0.5 * avg(price) from {0} t2 "
         "where t2.k = t1.k and t2.s is not null)")
    df = spark.sql(q.format("agg_f"))
    plan = plan_of(df)
    assert "Aggregates:" in plan and "GroupBy: k" in plan, plan
    assert df.collect() == spark.sql(q.format("agg_p")).collect()


def test_sums_of_narrow_decimals_over_many_rows_match_parquet(spark, tmp_table):
    """A partial sum of a decimal(2, 0) column over 50,000 rows leaves decimal(2, 0): Spark casts
    partial sums to the input's type, so the scan hands them over in parts that fit."""
    df = spark.range(0, 50000, 1, 2).selectExpr("id % 3 as g", "cast(99 as decimal(2, 0)) as d",
                                              "cast(-9.9 as decimal(2, 1)) as e", "9223372036854775807 as big")
    path = tmp_table("narrow")
    df.write.format("fermion").save(path)
    parquet = path + "-parquet"
    df.write.parquet(parquet)
    q = "select g, sum(d), sum(e), avg(d), count(*) from {} group by g order by g"
    t = spark.read.format("fermion").load(path)
    t.createOrReplaceTempView("narrow_f")
    spark.read.parquet(parquet).createOrReplaceTempView("narrow_p")
    got = spark.sql(q.format("narrow_f"))
    assert "Aggregates:" in plan_of(got)
    assert got.collect() == spark.sql(q.format("narrow_p")).collect()
    assert got.collect()[0][1] == Decimal(99 * 16667)
    # A bigint sum past 2^63 fails as Spark's own does (ANSI), not with a wrapped number.
    with pytest.raises((Py4JJavaError, PySparkException)) as fermion_error:
        spark.sql("select sum(big) from narrow_f").collect()
    with pytest.raises((Py4JJavaError, PySparkException)):
        spark.sql("select sum(big) from narrow_p").collect()
    assert "overflow" in str(fermion_error.value).lower()


def test_overflow_in_a_computed_value_raises_as_spark_does(spark, tmp_table):
    df = spark.range(0, 1000, 1, 1).selectExpr(
        "cast(if(id = 500, '9999999999999999999999999999999999.99', '1') as decimal(36, 2)) as a",
        "cast(if(id = 500, 99999.99, 2) as decimal(7, 2)) as b",
        "if(id = 10, null, id) as c")
    path = tmp_table("overflow")
    df.write.format("fermion").save(path)
    parquet = path + "-parquet"
    df.write.parquet(parquet)
    for fmt, p in (("fermion", path), ("parquet", parquet)):
        t = spark.read.format(fmt).load(p)
        # a * b needs decimal(38, 4) with 44 digits at row 500: Spark raises (ANSI mode).
        with pytest.raises((Py4JJavaError, PySparkException)):
            t.selectExpr("sum(a * b)").collect()
    t = spark.read.format("fermion").load(path)
    assert "Aggregates:" in plan_of(t.selectExpr("sum(a * b)"))
    # Rows where no overflow happens give the same sums.
    assert t.where("c < 400").selectExpr("sum(a * b)").collect() == \
        spark.read.parquet(parquet).where("c < 400").selectExpr("sum(a * b)").collect()


def test_legacy_arithmetic_mode_matches_parquet(spark, tables):
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        for q in ["select k, sum(price), sum(n), count(price), min(s), max(day) from {} group by k",
                  "select sum(price * disc), sum(n * 3) from {} where day < date'1996-01-01'"]:
            got = rows(spark.sql(q.format("agg_f")))
            assert got == rows(spark.sql(q.format("agg_p"))), q
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")


def test_leading_substrings_are_decided_by_the_scan(spark, tables):
    """TPC-H Q22's `substring(c_phone, 1, 2) in (...)`: a prefix test, decided exactly."""
    q = "select count(*), avg(price) from {} where substring(s, 1, 2) in ('g1', 'g3') and price > 10"
    df = spark.sql(q.format("agg_f"))
    plan = plan_of(df)
    assert "StartsWith(s" in plan and "Aggregates:" in plan and not SPARK_FILTER.search(plan), plan
    assert df.collect() == spark.sql(q.format("agg_p")).collect()
    # Literals of another length or not ASCII are left to Spark.
    for other in ["substring(s, 1, 2) in ('g1', 'g')", "substring(s, 1, 1) = '\u00e9'", "substring(s, 2, 1) = '1'"]:
        q = f"select count(*) from {{}} where {other}"
        df = spark.sql(q.format("agg_f"))
        assert SPARK_FILTER.search(plan_of(df)), other
        assert df.collect() == spark.sql(q.format("agg_p")).collect(), other


def test_predicates_the_scan_cannot_decide_stay_with_spark(spark, tables):
    q = "select k, count(*), sum(price) from {} where substring(s, 2, 1) = '1' and day < date'1996-01-01' group by k"
    df = spark.sql(q.format("agg_f"))
    plan = plan_of(df)
    assert SPARK_FILTER.search(plan) and "Aggregates:" not in plan, plan
    assert rows(df) == rows(spark.sql(q.format("agg_p")))


def test_option_turns_it_off_and_explain_shows_what_was_pushed(spark, tables):
    q = "select s, sum(price) from {} where k = 1 group by s"
    assert "Aggregates:" not in plan_of(spark.sql(q.format("agg_off")))
    plan = plan_of(spark.sql(q.format("agg_f")))
    assert "Aggregates: Sum(Column(price,decimal(15,2)))" in plan and "GroupBy: s" in plan, plan


def test_deletions_added_columns_and_partitions(spark, tmp_table):
    path = tmp_table("aggds")
    spark.range(0, 5000, 1, 2).selectExpr("id", "cast(id % 4 as int) as part", "cast(id as decimal(10, 2)) as v") \
        .write.format("fermion").partitionBy("part").save(path)
    spark.sql(f"CREATE TABLE aggds USING fermion LOCATION '{path}'")
    try:
        spark.sql("DELETE FROM aggds WHERE id % 10 = 0")
        spark.sql("ALTER TABLE aggds ADD COLUMN extra INT")
        spark.sql("INSERT INTO aggds (id, v, extra, part) SELECT id, cast(id as decimal(10, 2)), cast(id % 3 as int), "
                  "cast(id % 4 as int) FROM range(5000, 6000)")
        parquet = path + "-parquet"
        spark.table("aggds").write.parquet(parquet)
        spark.read.parquet(parquet).createOrReplaceTempView("aggds_p")
        for where in ["extra = 1", "extra is null", "part = 2 and extra is null", "part >= 2", "id > 4500",
                      "extra is not null and part = 1"]:
            q = f"select part, extra, count(*), sum(v), min(id), max(v) from {{}} where {where} group by part, extra"
            df = spark.sql(q.format("aggds"))
            assert "Aggregates:" in plan_of(df), plan_of(df)
            assert rows(df) == rows(spark.sql(q.format("aggds_p"))), where
        # No partition matches: without GROUP BY there is still one row, with a count of 0.
        q = "select count(*), count(extra), sum(v), max(id) from {} where part = 7"
        df = spark.sql(q.format("aggds"))
        assert "Aggregates:" in plan_of(df), plan_of(df)
        assert df.collect() == spark.sql(q.format("aggds_p")).collect() == [(0, 0, None, None)]
    finally:
        spark.sql("DROP TABLE aggds")


def test_repeated_aggregate_scans_are_reused(spark, tables):
    """TPC-H Q15's shape: the same aggregated view twice; the planner runs its scan once."""
    q = ("with r as (select k, sum(price * (1 - disc)) as rev from agg_f where day < date'1996-01-01' group by k) "
         "select k, rev from r where rev = (select max(rev) from r)")
    df = spark.sql(q)
    df.collect()
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "Reused" in plan, plan
    assert df.collect() == spark.sql(q.replace("agg_f", "agg_p")).collect()
