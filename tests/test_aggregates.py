"""COUNT/MIN/MAX without GROUP BY answered from file metadata: same answers as reading the data."""
import pytest


@pytest.fixture(scope="module")
def agg_table(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("aggs")
    df = spark.range(0, 50000, 1, 3).selectExpr(
        "id", "if(id % 9 = 0, null, id - 25000) as k", "cast(id % 200 - 100 as tinyint) as small",
        "if(id % 4 = 0, null, date_add(date'2001-01-01', cast(id % 3000 as int))) as day",
        "timestamp_micros(id * 1000003) as ts", "cast(id / 7 as decimal(10, 3)) as amount",
        "id % 3 = 0 as flag", "cast(null as bigint) as nothing", "cast(id as string) as s", "id * 0.5 as x")
    f = str(base / "f")
    df.write.format("fermion").option("stripeRows", "4000").save(f)
    return f


def plan_of(df):
    return df._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("exprs", [
    ["count(*)"],
    ["count(k)", "count(day)", "count(nothing)", "count(s)"],
    ["min(k)", "max(k)", "min(small)", "max(small)"],
    ["min(day)", "max(day)", "min(ts)", "max(ts)"],
    ["min(amount)", "max(amount)", "min(flag)", "max(flag)", "min(nothing)", "max(nothing)"],
    ["count(*)", "min(id)", "max(id)", "count(k)"],
])
def test_metadata_aggregates_match_data(spark, agg_table, exprs):
    pushed = spark.read.format("fermion").load(agg_table).selectExpr(*exprs)
    reference = spark.read.format("fermion").option("filterPushdown", "false").load(agg_table).selectExpr(*exprs)
    assert pushed.collect() == reference.collect()
    assert "MetadataAggregates" in plan_of(pushed), plan_of(pushed)
    assert "MetadataAggregates" not in plan_of(reference)


@pytest.mark.parametrize("exprs", [["min(s)"], ["max(x)"], ["sum(id)"], ["count(distinct k)"]])
def test_other_aggregates_read_data(spark, agg_table, exprs):
    df = spark.read.format("fermion").load(agg_table).selectExpr(*exprs)
    reference = spark.read.format("fermion").option("filterPushdown", "false").load(agg_table).selectExpr(*exprs)
    assert df.collect() == reference.collect()
    assert "MetadataAggregates" not in plan_of(df)


def test_aggregates_with_filters_or_group_by_read_data(spark, agg_table):
    t = spark.read.format("fermion").load(agg_table)
    filtered = t.where("id > 100").selectExpr("count(*)")
    assert filtered.collect()[0][0] == 49899
    assert "MetadataAggregates" not in plan_of(filtered)
    grouped = t.groupBy("flag").count()
    assert sorted(tuple(r) for r in grouped.collect()) == [(False, 33333), (True, 16667)]


@pytest.mark.parametrize("expr", [
    "count_if(small = 300)", "count_if(small = 5)", "count_if(k > 0)", "count(if(small = 300, 1, null))",
    "count(1)", "count(null)", "count(small + 1)", "min(small + 1)",
])
def test_aggregates_over_expressions_match_parquet(spark, agg_table, tmp_path, expr):
    parquet = str(tmp_path / "p")
    spark.read.format("fermion").load(agg_table).write.parquet(parquet)
    assert spark.read.format("fermion").load(agg_table).selectExpr(expr).collect() == \
        spark.read.parquet(parquet).selectExpr(expr).collect()


def test_count_of_empty_strings_and_nulls(spark, tmp_table):
    """Issue 13 (a): a string column of only empty strings and nulls has no null count in its
    CMB (OFFSETS and DATA are USE_DEFAULT); count(s) counts the VALIDITY bits instead of failing."""
    df = spark.range(3000).selectExpr("id", "CASE WHEN id % 3 = 0 THEN NULL ELSE '' END AS s",
                                      "CASE WHEN id % 3 = 0 THEN NULL ELSE X'' END AS b")
    path = tmp_table("empty-strings")
    df.write.format("fermion").option("stripeRows", "1000").save(path)
    t = spark.read.format("fermion").load(path)
    pushed = t.selectExpr("count(s)", "count(b)", "count(*)")
    assert "MetadataAggregates" in plan_of(pushed), plan_of(pushed)
    parquet = str(path) + "-parquet"
    df.write.parquet(parquet)
    expected = spark.read.parquet(parquet).selectExpr("count(s)", "count(b)", "count(*)").collect()
    assert [tuple(r) for r in expected] == [(2000, 2000, 3000)]
    assert pushed.collect() == expected
