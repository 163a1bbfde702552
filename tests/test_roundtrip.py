"""Every flat type, with nulls and edge values, read back identical to Parquet's copy."""
import datetime as dt
from decimal import Decimal

from pyspark.sql import functions as F
from pyspark.sql.types import (BinaryType, BooleanType, ByteType, DateType, DecimalType, DoubleType,
                               FloatType, IntegerType, LongType, ShortType, StringType, StructField,
                               StructType, TimestampNTZType, TimestampType)

from conftest import assert_same_as_parquet, rows_of

SCHEMA = StructType([
    StructField("b", BooleanType()),
    StructField("i8", ByteType()),
    StructField("i16", ShortType()),
    StructField("i32", IntegerType()),
    StructField("i64", LongType()),
    StructField("f32", FloatType()),
    StructField("f64", DoubleType()),
    StructField("s", StringType()),
    StructField("bin", BinaryType()),
    StructField("d", DateType()),
    StructField("ts", TimestampType()),
    StructField("ts_ntz", TimestampNTZType()),
    StructField("dec9", DecimalType(9, 3)),
    StructField("dec18", DecimalType(18, 0)),
    StructField("dec38", DecimalType(38, 10)),
    StructField("required", LongType(), nullable=False),
])

UTC = dt.timezone.utc
EDGE_ROWS = [
    (True, -128, -32768, -2147483648, -9223372036854775808, float("-inf"), float("-inf"), "", b"",
     dt.date(1, 1, 1), dt.datetime(1, 1, 2, tzinfo=UTC), dt.datetime(1, 1, 2), Decimal("-999999.999"),
     Decimal("-999999999999999999"), Decimal("-9999999999999999999999999999.9999999999"), 0),
    (False, 127, 32767, 2147483647, 9223372036854775807, float("inf"), float("nan"), "ü€😀 \x00 tail", b"\x00\xff",
     dt.date(9999, 12, 31), dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
     Decimal("999999.999"), Decimal("999999999999999999"), Decimal("9999999999999999999999999999.9999999999"), -1),
    (None, None, None, None, None, -0.0, 0.0, None, None, None, None, None, None, None, None, 1),
    (None, 0, 0, 0, 0, float("nan"), -0.0, "x" * 100000, bytes(range(256)) * 50, dt.date(1970, 1, 1),
     dt.datetime(1970, 1, 1, tzinfo=UTC), dt.datetime(1970, 1, 1), Decimal("0.001"), Decimal("1"), Decimal("-0.0000000001"), 2),
]


def generated(spark, rows):
    """Many rows with nulls in every nullable column, derived from the id."""
    return spark.range(rows, numPartitions=3).select(
        F.when(F.col("id") % 7 == 0, None).otherwise(F.col("id") % 2 == 0).alias("b"),
        (F.col("id") % 256 - 128).cast("tinyint").alias("i8"),
        F.when(F.col("id") % 5 == 0, None).otherwise((F.col("id") * 37 % 65536 - 32768).cast("smallint")).alias("i16"),
        (F.col("id") * 7919 % 2147483647).cast("int").alias("i32"),
        F.when(F.col("id") % 3 == 0, None).otherwise(F.col("id") * 1000003).alias("i64"),
        (F.col("id") / 7).cast("float").alias("f32"),
        F.when(F.col("id") % 11 == 0, None).otherwise(F.sqrt(F.col("id"))).alias("f64"),
        F.when(F.col("id") % 4 == 0, None).otherwise(F.concat(F.lit("v"), (F.col("id") % 97).cast("string"))).alias("s"),
        F.col("id").cast("string").cast("binary").alias("bin"),
        F.date_add(F.lit("2000-01-01").cast("date"), (F.col("id") % 5000).cast("int")).alias("d"),
        F.timestamp_micros(F.col("id") * 999983).alias("ts"),
        F.timestamp_micros(F.col("id") * 13).cast("timestamp_ntz").alias("ts_ntz"),
        (F.col("id") / 1000).cast("decimal(9,3)").alias("dec9"),
        F.when(F.col("id") % 9 == 0, None).otherwise(F.col("id").cast("decimal(18,0)")).alias("dec18"),
        (F.col("id") * 12345.6789).cast("decimal(38,10)").alias("dec38"),
        F.col("id").alias("required"))


def test_edge_values_round_trip(spark, tmp_table):
    df = spark.createDataFrame(EDGE_ROWS, SCHEMA)
    back = assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"))
    assert back.schema == df.schema


def test_generated_rows_small_pages_and_stripes(spark, tmp_table):
    df = generated(spark, 50_000)
    assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"), stripeRows="7000", pageSize="4k")


def test_write_options_change_nothing_visible(spark, tmp_table):
    df = generated(spark, 5_000)
    expected = rows_of(df)
    for opts in ({"compression": "none"}, {"checksum": "false"}, {"compressionLevel": "19"}, {"stripeBytes": "64k"}):
        path = tmp_table("opt")
        w = df.write.format("fermion")
        for k, v in opts.items():
            w = w.option(k, v)
        w.save(path)
        assert rows_of(spark.read.format("fermion").load(path)) == expected, opts


def test_all_null_and_empty(spark, tmp_table):
    df = spark.range(1000).selectExpr("id", "cast(null as string) as s", "cast(null as double) as x")
    back = assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"))
    assert back.where("s is null and x is null").count() == 1000
    empty = spark.createDataFrame([], SCHEMA)
    path = tmp_table("empty")
    empty.write.format("fermion").save(path)
    again = spark.read.format("fermion").load(path)
    assert again.count() == 0 and again.schema == SCHEMA
