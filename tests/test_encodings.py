"""Page encodings through Spark: every encoding forced, per-column settings from writer options
and from field metadata, and errors for bad settings. Data is read back identical to Parquet."""
import os

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from conftest import assert_same_as_parquet, rows_of
from fermion_spark import tools
from test_roundtrip import EDGE_ROWS, SCHEMA, generated

# Huffman blocks (format 1.7) forced together: "huffman" alone also Huffman-codes dictionary codes.
ENCODINGS = ["plain", "constant", "rle", "bitpack", "for", "delta", "delta_for", "dictionary", "dictionary_by_length",
             "huffman,delta_huffman"]


def low_entropy(spark, rows):
    """Columns shaped for each lightweight encoding: sorted, small ranges, runs, few strings."""
    return spark.range(rows, numPartitions=2).select(
        F.col("id").alias("sorted_id"),
        F.timestamp_micros(F.lit(1_700_000_000_000_000) + F.col("id") * 1_000_000).alias("ts"),
        (F.col("id") % 13).cast("int").alias("small"),
        (F.lit(1_000_000) + F.col("id") % 500).alias("offset_range"),
        F.floor(F.col("id") / 1000).alias("runs"),
        F.lit(7).alias("constant"),
        F.element_at(F.array(*[F.lit(s) for s in ["AIR", "MAIL", "SHIP", "TRUCK", "RAIL"]]),
                     (F.col("id") % 5 + 1).cast("int")).alias("mode"),
        F.when(F.col("id") % 100 != 0, None).otherwise(F.col("id")).alias("mostly_null"),
        (F.col("id") % 3 == 0).alias("flag"),
        (F.col("id") % 1000 / 100).cast("decimal(12,2)").alias("price"),
        F.array(F.col("id") % 3, F.lit(1)).alias("pair"))


@pytest.fixture(scope="module")
def parquet_reference(spark, tmp_path_factory):
    """Each data shape written to Parquet once for the module: its schema and rows, with which every
    forced encoding's read is compared (the shapes are deterministic)."""
    cache = {}

    def of(name, df):
        if name not in cache:
            path = str(tmp_path_factory.mktemp(name) / "p")
            df.write.parquet(path)
            p = spark.read.parquet(path)
            cache[name] = (p.schema.simpleString(), rows_of(p))
        return cache[name]
    return of


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_each_encoding_forced_reads_back(spark, tmp_table, parquet_reference, encoding):
    shapes = [("low_entropy", low_entropy(spark, 30_000), dict(pageSize="8k", stripeRows="10000")),
              ("generated", generated(spark, 8_000), dict(pageSize="4k")),
              ("edges", spark.createDataFrame(EDGE_ROWS, SCHEMA), {})]
    for name, df, options in shapes:
        path = tmp_table(name)
        df.write.format("fermion").option("encodings", encoding).options(**options).save(path)
        f = spark.read.format("fermion").load(path)
        schema, rows = parquet_reference(name, df)
        # Parquet makes every nested field nullable; Fermion keeps the DataFrame's nullability.
        assert f.schema.simpleString() == schema == df.schema.simpleString(), name
        assert rows_of(f) == rows, name


def size_of(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs if f.endswith(".fermion"))


def test_encodings_shrink_low_entropy_data(spark, tmp_table):
    df = low_entropy(spark, 200_000)
    plain, auto = tmp_table("plain"), tmp_table("auto")
    df.write.format("fermion").option("encodings", "plain").option("compression", "none").save(plain)
    df.write.format("fermion").option("compression", "none").save(auto)
    assert size_of(auto) * 4 < size_of(plain), (size_of(auto), size_of(plain))
    assert rows_of(spark.read.format("fermion").load(auto)) == rows_of(df)


def test_per_column_settings_from_options_and_metadata(spark, tmp_table):
    df = low_entropy(spark, 100_000).select("sorted_id", "mode")
    base = tmp_table("base")
    df.write.format("fermion").option("encodings", "plain").option("compression", "none").save(base)
    # one column gets its encodings back through a per-column option
    per_column = tmp_table("col")
    (df.write.format("fermion").option("encodings", "plain").option("compression", "none")
       .option("column.sorted_id.encodings", "delta_for").save(per_column))
    assert size_of(per_column) < size_of(base) - 500_000
    # the same through field metadata
    meta = df.select(F.col("sorted_id").alias("sorted_id", metadata={"fermion.encodings": "all"}), "mode")
    by_metadata = tmp_table("meta")
    meta.write.format("fermion").option("encodings", "plain").option("compression", "none").save(by_metadata)
    assert size_of(by_metadata) < size_of(base) - 500_000
    # an explicit option wins over the metadata
    overridden = tmp_table("both")
    (meta.write.format("fermion").option("encodings", "plain").option("compression", "none")
         .option("column.sorted_id.encodings", "plain").save(overridden))
    assert size_of(overridden) == size_of(base)
    for p in (per_column, by_metadata, overridden):
        assert rows_of(spark.read.format("fermion").load(p)) == rows_of(df)


def test_bad_encoding_settings_are_named(spark, tmp_table):
    df = spark.range(10)
    with pytest.raises(Exception, match="unknown encoding 'zip'"):
        df.write.format("fermion").option("encodings", "zip").save(tmp_table())
    with pytest.raises(Exception, match="column.nope"):
        df.write.format("fermion").option("column.nope.compression", "none").save(tmp_table())
    with pytest.raises(Exception, match="column.id.compression"):
        df.write.format("fermion").option("column.id.compression", "lz9").save(tmp_table())
    with pytest.raises(Exception, match="fermion.pageSize"):
        df.select(F.col("id").alias("id", metadata={"fermion.pageSize": "1"})).write.format("fermion").save(tmp_table())


def test_huffman_blocks_shrink_dates_of_orders(spark, tmp_table):
    """Format 1.7: lineitem-like ship dates (1-7 lines per order, each 1-121 days after the order's
    date) become DELTA_HUFFMAN pages, smaller than the lightweight encodings make them, and read
    back as Parquet does."""
    orders = spark.range(12_000, numPartitions=1).select(
        F.col("id").alias("order"),
        (F.lit(8035) + F.floor(F.rand(1) * 2406)).cast("int").alias("day"),
        (F.floor(F.rand(2) * 7) + 1).cast("int").alias("lines"))
    df = (orders.select("order", "day", F.explode(F.sequence(F.lit(1), F.col("lines"))).alias("line"))
          .select("order", "line", F.date_add(F.lit("1970-01-01").cast("date"),
                                                (F.col("day") + F.floor(F.rand(3) * 121) + 1).cast("int"))
                  .alias("shipdate"))
          .orderBy("order", "line"))
    lightweight = "plain,constant,rle,bitpack,for,delta,delta_for,dictionary,dictionary_by_length"
    with_huffman, without = tmp_table("huff"), tmp_table("light")
    df.write.format("fermion").save(with_huffman)
    df.write.format("fermion").option("encodings", lightweight).save(without)
    files = [os.path.join(d, f) for d, _, fs in os.walk(with_huffman) for f in fs if f.endswith(".fermion")]
    encodings = {e for f in files for c in tools.inspect(f, spark=spark)["columns"] if c["name"] == "shipdate"
                 for s in c["streams"] if s["stream_type"] == "DATA" for e in s["encodings"]}
    assert "delta_huffman" in encodings, encodings
    assert size_of(with_huffman) < size_of(without) * 0.95, (size_of(with_huffman), size_of(without))
    assert_same_as_parquet(spark, df, tmp_table("f"), tmp_table("p"))
