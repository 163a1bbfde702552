"""Struct, array and map columns in every combination, to depth 10, through PySpark: identical to
Parquet's copy of the same data, with nested pruning reaching the scan."""
import uuid

from hypothesis import HealthCheck, given, settings, strategies as st
from pyspark.sql.types import (ArrayType, BooleanType, DoubleType, IntegerType, LongType, MapType,
                               StringType, StructField, StructType)

from conftest import assert_same_as_parquet, rows_of


def test_every_combination_with_nulls_at_every_level(spark, tmp_table):
    df = spark.range(5000, numPartitions=3).selectExpr(
        "id",
        # struct of (leaf, array, map, struct)
        """if(id % 11 = 0, null, named_struct(
              'n', if(id % 4 = 0, null, id),
              'arr', if(id % 6 = 0, null, array(id, null, id + 1)),
              'm', map('k', if(id % 5 = 0, null, cast(id as string))),
              'inner', if(id % 9 = 0, null, named_struct('x', cast(id as double), 'y', 'yy')))) as st""",
        # array of structs, array of arrays, array of maps
        "if(id % 7 = 0, null, array(named_struct('p', id, 'q', if(id % 2 = 0, null, 'q')), null)) as arr_st",
        "if(id % 8 = 0, array(), array(array(id), array(), null, array(null))) as arr_arr",
        "array(map('a', id), map(), null) as arr_map",
        # map of arrays, map of structs, map with null values, empty map
        "if(id % 3 = 0, map(), map('x', array(id, id), 'y', null)) as map_arr",
        "map(cast(id % 10 as int), named_struct('v', id, 'w', array('w'))) as map_st",
        "if(id % 13 = 0, null, map('only', cast(null as bigint))) as map_nulls",
        # a null struct whose fields would be non-null
        "if(id % 2 = 0, null, named_struct('a', 1, 'b', 2)) as null_struct")
    assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"), stripeRows="700", pageSize="2k")


def test_depth_ten(spark, tmp_table):
    expr = "id"
    for level in range(10):
        expr = (f"array({expr}, null)" if level % 3 == 0 else
                f"named_struct('l{level}', {expr}, 'n', if(id % {level + 2} = 0, null, id))" if level % 3 == 1 else
                f"map('k{level}', {expr})")
    df = spark.range(500).selectExpr(f"if(id % 17 = 0, null, {expr}) as deep")
    assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"), stripeRows="64")


def test_lists_spanning_pages_and_stripes(spark, tmp_table):
    df = spark.range(60, numPartitions=1).selectExpr("id", "sequence(id, id + 20000) as big",
                                                      "transform(sequence(1, 3000), x -> cast(x * id as string)) as strs")
    assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"), stripeRows="7", pageSize="4k")


def test_nested_pruning_reaches_the_scan(spark, tmp_table):
    path = tmp_table()
    spark.range(100).selectExpr(
        "named_struct('a', id, 'b', named_struct('c', id * 2, 'd', 'dd'), 'e', array(id)) as s",
        "array(named_struct('p', id, 'q', 'q')) as arr").write.format("fermion").save(path)
    df = spark.read.format("fermion").load(path).selectExpr("s.b.c", "arr.p")
    read_schema = df._jdf.queryExecution().executedPlan().collectLeaves().head().scan().readSchema()
    assert read_schema.simpleString() in ("struct<s:struct<b:struct<c:bigint>>,arr:array<struct<p:bigint>>>",
                                          "struct<arr:array<struct<p:bigint>>,s:struct<b:struct<c:bigint>>>")
    assert sorted((r.c, tuple(r.p)) for r in df.collect()) == [(i * 2, (i,)) for i in range(100)]


def test_size_of_lists(spark, tmp_table):
    path = tmp_table()
    df = spark.range(10000).selectExpr("if(id % 10 = 0, null, sequence(0, id % 50)) as l")
    df.write.format("fermion").save(path)
    got = spark.read.format("fermion").load(path).selectExpr("sum(size(l))", "count(l)").collect()[0]
    want = df.selectExpr("sum(size(l))", "count(l)").collect()[0]
    assert got == want


def test_list_lengths_and_elements_of_each_row_together(spark, tmp_table):
    # Lengths and elements of lists and maps read together (the lists' starts come from their
    # lengths, row after row), compiled and interpreted, as Spark computes them itself.
    path = tmp_table()
    df = spark.range(2000, numPartitions=2).selectExpr(
        "id", "if(id % 7 = 0, null, sequence(id, id + id % 5)) as l",
        "if(id % 11 = 0, null, map_from_arrays(sequence(0, id % 3), sequence(id, id + id % 3))) as m")
    df.write.format("fermion").save(path)
    query = ["id", "size(l)", "l[0]", "element_at(l, -1)", "size(m)", "m[0]", "element_at(m, cast(id % 3 as bigint))"]
    got = sorted(spark.read.format("fermion").load(path).selectExpr(*query).collect())
    assert got == sorted(df.selectExpr(*query).collect())
    assert len(got) == 2000
    # Interpreted (no whole-stage code): a filter on size() under a projection of elements.
    filtered = ["id", "l[0]", "element_at(l, -1)", "m[1]", "size(l)"]
    spark.conf.set("spark.sql.codegen.wholeStage", "false")
    try:
        got = sorted(spark.read.format("fermion").load(path).where("size(l) > 2 or size(m) > 1")
                     .selectExpr(*filtered).collect())
    finally:
        spark.conf.unset("spark.sql.codegen.wholeStage")
    assert got == sorted(df.where("size(l) > 2 or size(m) > 1").selectExpr(*filtered).collect())
    assert len(got) > 500


LEAVES = [(LongType(), st.integers(-2**63, 2**63 - 1)), (IntegerType(), st.integers(-2**31, 2**31 - 1)),
          (StringType(), st.text(max_size=8)), (DoubleType(), st.floats()), (BooleanType(), st.booleans())]


@st.composite
def nested_type(draw, depth):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(range(len(LEAVES))))
    kind = draw(st.sampled_from(["struct", "array", "map"]))
    if kind == "struct":
        n = draw(st.integers(1, 3))
        return ("struct", [(draw(nested_type(depth - 1)), draw(st.booleans())) for _ in range(n)])
    if kind == "array":
        return ("array", draw(nested_type(depth - 1)), draw(st.booleans()))
    return ("map", draw(nested_type(depth - 1)), draw(st.booleans()))


def spark_type(t):
    if isinstance(t, int):
        return LEAVES[t][0]
    if t[0] == "struct":
        return StructType([StructField(f"f{i}", spark_type(c), nullable) for i, (c, nullable) in enumerate(t[1])])
    if t[0] == "array":
        return ArrayType(spark_type(t[1]), t[2])
    return MapType(StringType(), spark_type(t[1]), t[2])


def values(t, nullable):
    base = (LEAVES[t][1] if isinstance(t, int) else
            st.tuples(*[values(c, n) for c, n in t[1]]) if t[0] == "struct" else
            st.lists(values(t[1], t[2]), max_size=4) if t[0] == "array" else
            st.dictionaries(st.text(max_size=3), values(t[1], t[2]), max_size=3))
    return (st.none() | base) if nullable else base


@st.composite
def tables(draw):
    cols = [(draw(nested_type(4)), draw(st.booleans())) for _ in range(draw(st.integers(1, 3)))]
    schema = StructType([StructField(f"c{i}", spark_type(t), n) for i, (t, n) in enumerate(cols)])
    rows = draw(st.lists(st.tuples(*[values(t, n) for t, n in cols]), max_size=40))
    return schema, rows, draw(st.sampled_from(["1", "5", "262144"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(table=tables())
def test_random_nested_tables_match_parquet(spark, tmp_path, table):
    schema, rows, stripe_rows = table
    df = spark.createDataFrame(rows, schema).coalesce(1)
    f, p = str(tmp_path / f"f-{uuid.uuid4().hex}"), str(tmp_path / f"p-{uuid.uuid4().hex}")
    df.write.format("fermion").option("stripeRows", stripe_rows).option("pageSize", "1k").save(f)
    df.write.parquet(p)
    fermion = spark.read.format("fermion").load(f)
    assert fermion.schema == schema
    assert rows_of(fermion) == rows_of(spark.read.parquet(p))
