"""Bad input fails clearly: options and types at planning time, damaged files with the format's
four typed errors naming the file."""
import os
import re

import pytest
from pyspark.errors import IllegalArgumentException

from fermion_spark import errors


def write_table(spark, path):
    spark.range(20_000, numPartitions=1).selectExpr("id", "cast(id as string) as s", "id * 0.5 as x") \
        .write.format("fermion").option("stripeRows", "5000").save(path)
    data = os.path.join(path, "data")
    files = [os.path.join(data, n) for n in os.listdir(data) if n.endswith(".fermion")]
    assert len(files) == 1
    return files[0]


def damage(path, edit):
    """Rewrites a file with edit(bytearray) applied (the test plays the disk, not the product)."""
    data = bytearray(open(path, "rb").read())
    open(path, "wb").write(bytes(edit(data)))


def read_error(spark, path, error):
    """The message of the `error` (a fermion_spark.errors class) a read of `path` raises."""
    with pytest.raises(error) as info:
        spark.read.format("fermion").load(path).collect()
    return str(info.value)


def test_unknown_and_invalid_options(spark, tmp_table):
    with pytest.raises(IllegalArgumentException, match="compresion"):
        spark.range(1).write.format("fermion").option("compresion", "zstd").save(tmp_table())
    with pytest.raises(IllegalArgumentException, match="compression"):
        spark.range(1).write.format("fermion").option("compression", "lz77").save(tmp_table())
    with pytest.raises(IllegalArgumentException, match="stripeRows"):
        spark.range(1).write.format("fermion").option("stripeRows", "-3").save(tmp_table())
    path = tmp_table()
    spark.range(1).write.format("fermion").save(path)
    with pytest.raises(IllegalArgumentException, match="verifyChecksum"):
        spark.read.format("fermion").option("verifyChecksum", "true").load(path).collect()


def test_unsupported_types_name_the_column(spark, tmp_table):
    path = tmp_table()
    with pytest.raises(IllegalArgumentException, match="`doc`"):
        spark.range(1).selectExpr("id", "parse_json('{}') as doc").write.format("fermion").save(path)
    with pytest.raises(IllegalArgumentException, match="`props.value.v`"):
        spark.sql(f"CREATE TABLE bad_t (id INT, props MAP<STRING, STRUCT<v: VARIANT>>) USING fermion LOCATION '{path}'")
    assert not os.path.exists(path) or not os.listdir(path)


def test_missing_path(spark, tmp_table):
    with pytest.raises(Exception, match="does not exist"):
        spark.read.format("fermion").load(tmp_table("nothing-here")).collect()


def test_truncated_file(spark, tmp_table):
    path = tmp_table()
    f = write_table(spark, path)
    damage(f, lambda d: d[:-37])
    msg = read_error(spark, path, errors.InvalidFermionFileError)
    assert os.path.basename(f) in msg


def test_bytes_missing_from_the_middle(spark, tmp_table):
    path = tmp_table()
    f = write_table(spark, path)
    damage(f, lambda d: d[:1000] + d[9000:])
    msg = read_error(spark, path, errors.FermionOffsetOutOfRangeError)
    assert os.path.basename(f) in msg


def test_corrupt_page(spark, tmp_table):
    path = tmp_table()
    f = write_table(spark, path)
    damage(f, lambda d: d[:500] + bytes([d[500] ^ 0x01]) + d[501:])
    msg = read_error(spark, path, errors.FermionChecksumError)
    assert os.path.basename(f) in msg


def test_newer_format_version(spark, tmp_table):
    path = tmp_table()
    f = write_table(spark, path)
    damage(f, lambda d: d[:-8] + bytes([9]) + d[-7:])  # footer: u16 major version at byte 56 of 64
    msg = read_error(spark, path, errors.UnsupportedFermionVersionError)
    assert re.search(r"\b9\.\d+\b", msg)


def test_not_a_fermion_file(spark, tmp_table):
    path = tmp_table()
    os.makedirs(path)
    spark.range(10).write.parquet(path + "-pq")
    pq = [n for n in os.listdir(path + "-pq") if n.endswith(".parquet")][0]
    with open(os.path.join(path + "-pq", pq), "rb") as src, open(os.path.join(path, "x.fermion"), "wb") as dst:
        dst.write(src.read())
    msg = read_error(spark, path, errors.InvalidFermionFileError)
    assert "x.fermion" in msg
