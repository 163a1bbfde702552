"""Property-based: random flat schemas and random rows (seeded by Hypothesis) written as Fermion
and as Parquet read back identical."""
import datetime as dt
import uuid
from decimal import Decimal

from hypothesis import HealthCheck, given, settings, strategies as st
from pyspark.sql.types import (BinaryType, BooleanType, ByteType, DateType, DecimalType, DoubleType,
                               FloatType, IntegerType, LongType, ShortType, StringType, StructField,
                               StructType, TimestampNTZType, TimestampType)

from conftest import rows_of

UTC = dt.timezone.utc
TYPES = {
    "bool": (BooleanType(), st.booleans()),
    "byte": (ByteType(), st.integers(-128, 127)),
    "short": (ShortType(), st.integers(-32768, 32767)),
    "int": (IntegerType(), st.integers(-2**31, 2**31 - 1)),
    "long": (LongType(), st.integers(-2**63, 2**63 - 1)),
    "float": (FloatType(), st.floats(width=32, allow_nan=True)),
    "double": (DoubleType(), st.floats(allow_nan=True)),
    "string": (StringType(), st.text(max_size=40)),
    "binary": (BinaryType(), st.binary(max_size=40)),
    "date": (DateType(), st.dates()),
    "timestamp": (TimestampType(), st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1),
                                                timezones=st.just(UTC))),
    "timestamp_ntz": (TimestampNTZType(), st.datetimes(min_value=dt.datetime(1, 1, 2))),
    "decimal": (DecimalType(12, 4), st.decimals(min_value=Decimal("-99999999.9999"), max_value=Decimal("99999999.9999"),
                                                places=4, allow_nan=False, allow_infinity=False)),
    "decimal_wide": (DecimalType(30, 2), st.decimals(min_value=Decimal("-1e27"), max_value=Decimal("1e27"), places=2,
                                                     allow_nan=False, allow_infinity=False)),
}


@st.composite
def tables(draw):
    names = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=6))
    nullable = [draw(st.booleans()) for _ in names]
    schema = StructType([StructField(f"c{i}_{n}", TYPES[n][0], nn) for i, (n, nn) in enumerate(zip(names, nullable))])
    row = st.tuples(*[(st.none() | TYPES[n][1]) if nn else TYPES[n][1] for n, nn in zip(names, nullable)])
    rows = draw(st.lists(row, max_size=60))
    stripe_rows = draw(st.sampled_from(["1", "7", "64", "262144"]))
    return schema, rows, stripe_rows


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=tables())
def test_random_tables_match_parquet(spark, tmp_path, table):
    schema, rows, stripe_rows = table
    df = spark.createDataFrame(rows, schema).coalesce(1)
    f = str(tmp_path / f"f-{uuid.uuid4().hex}")
    p = str(tmp_path / f"p-{uuid.uuid4().hex}")
    df.write.format("fermion").option("stripeRows", stripe_rows).option("pageSize", "1k").save(f)
    df.write.parquet(p)
    fermion = spark.read.format("fermion").load(f)
    assert fermion.schema == schema
    assert rows_of(fermion) == rows_of(spark.read.parquet(p))
