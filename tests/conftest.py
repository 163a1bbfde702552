"""End-to-end tests: PySpark driving the installed fermion-spark wheel (jar inside)."""
import math
import os
import tempfile
import uuid

import pytest
from pyspark.sql import SparkSession

from fermion_spark import configure_spark_with_fermion


@pytest.fixture(scope="session")
def spark():
    warehouse = tempfile.mkdtemp(prefix="fermion-warehouse-")
    builder = (SparkSession.builder.master("local[2]").appName("fermion-e2e")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", warehouse)
               .config("spark.sql.parquet.compression.codec", "zstd"))
    session = configure_spark_with_fermion(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def tmp_table(tmp_path):
    """A fresh path for a table (not created)."""
    return lambda name="t": str(tmp_path / f"{name}-{uuid.uuid4().hex[:8]}")


def normalize(value):
    """Makes collected values comparable: NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(value, float):
        if math.isnan(value):
            return ("nan",)
        return ("float", value, math.copysign(1.0, value))
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", bytes(value))
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, tuple):  # Row (struct)
        return tuple(normalize(v) for v in value)
    if isinstance(value, dict):
        return sorted(((normalize(k), normalize(v)) for k, v in value.items()), key=repr)
    return value


def rows_of(df):
    """Collected rows as sorted, normalized tuples."""
    return sorted((tuple(normalize(v) for v in r) for r in df.collect()), key=repr)


def assert_same_as_parquet(spark, df, fermion_path, parquet_path, **fermion_options):
    writer = df.write.format("fermion")
    for k, v in fermion_options.items():
        writer = writer.option(k, v)
    writer.save(fermion_path)
    df.write.parquet(parquet_path)
    f = spark.read.format("fermion").load(fermion_path)
    p = spark.read.parquet(parquet_path)
    # Parquet makes every nested field nullable; Fermion keeps the DataFrame's nullability.
    assert f.schema.simpleString() == p.schema.simpleString()
    assert f.schema.simpleString() == df.schema.simpleString()
    assert rows_of(f) == rows_of(p)
    return f
