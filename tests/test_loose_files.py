"""A directory of loose Fermion files (no dataset) reads like a directory of Parquet files: a
column a file lacks reads NULL, `mergeSchema` unites the files' columns, a user schema may name a
subset, and `input_file_name()` and the `_metadata` column name each row's file."""
import glob
import os
import shutil

import pytest

from conftest import rows_of
from fermion_spark import errors


def loose_dir(spark, tmp_path, fmt):
    """Two files: (a, b) and then (a, c), as `fmt` files in one directory, in that name order."""
    out = tmp_path / f"loose-{fmt}"
    out.mkdir()
    parts = [
        spark.range(0, 5).selectExpr("id as a", "concat('b', id) as b"),
        spark.range(5, 8).selectExpr("id as a", "cast(id * 10 as int) as c"),
    ]
    for i, df in enumerate(parts):
        staging = tmp_path / f"staging-{fmt}-{i}"
        df.coalesce(1).write.format(fmt).save(str(staging))
        ext = "fermion" if fmt == "fermion" else "parquet"
        [src] = glob.glob(str(staging / "**" / f"*.{ext}"), recursive=True)
        shutil.copy(src, out / f"{i}.{ext}")
    return str(out)


def test_missing_columns_read_null_and_schemas_merge_like_parquet(spark, tmp_path):
    f = loose_dir(spark, tmp_path, "fermion")
    p = loose_dir(spark, tmp_path, "parquet")
    fermion = spark.read.format("fermion").load(f)
    parquet = spark.read.parquet(p)
    assert fermion.columns == parquet.columns == ["a", "b"]
    assert rows_of(fermion) == rows_of(parquet)
    assert fermion.where("b is null").count() == 3, "the second file has no `b`: NULL, never a default value"
    merged_f = spark.read.format("fermion").option("mergeSchema", "true").load(f)
    merged_p = spark.read.option("mergeSchema", "true").parquet(p)
    assert sorted(merged_f.columns) == sorted(merged_p.columns) == ["a", "b", "c"]
    assert rows_of(merged_f.select("a", "b", "c")) == rows_of(merged_p.select("a", "b", "c"))
    # a declared schema naming a subset (and a column no file has) is accepted
    spark.sql(f"CREATE TABLE loose_f (c INT, a BIGINT, zz STRING) USING fermion LOCATION '{f}'")
    spark.sql(f"CREATE TABLE loose_p (c INT, a BIGINT, zz STRING) USING parquet LOCATION '{p}'")
    try:
        assert spark.table("loose_f").columns == ["c", "a", "zz"]
        assert rows_of(spark.table("loose_f")) == rows_of(spark.table("loose_p"))
    finally:
        spark.sql("DROP TABLE loose_f")
        spark.sql("DROP TABLE loose_p")
    # Spark refuses user schemas on DataFrame reads of sources that resolve tables through a
    # catalog (as Fermion does for save modes and time travel): the error says so.
    with pytest.raises(Exception, match="user specified schema"):
        spark.read.format("fermion").schema("a bigint").load(f)


def test_conflicting_types_fail_clearly_when_merging(spark, tmp_path):
    out = tmp_path / "conflict"
    out.mkdir()
    for i, expr in enumerate(["cast(id as bigint) as a", "cast(id as string) as a"]):
        staging = tmp_path / f"s{i}"
        spark.range(3).selectExpr(expr).coalesce(1).write.format("fermion").save(str(staging))
        [src] = glob.glob(str(staging / "data" / "*.fermion"))
        shutil.copy(src, out / f"{i}.fermion")
    with pytest.raises(errors.InvalidFermionDatasetError, match=r"`a`"):
        spark.read.format("fermion").option("mergeSchema", "true").load(str(out)).collect()
    with pytest.raises(errors.InvalidFermionDatasetError, match=r"1\.fermion"):
        spark.read.format("fermion").load(str(out)).collect()


def test_input_file_name_and_metadata_column(spark, tmp_path, tmp_table):
    f = loose_dir(spark, tmp_path, "fermion")
    df = spark.read.format("fermion").load(f).selectExpr(
        "a", "input_file_name() as name", "_metadata.file_name as file_name", "_metadata.file_size as size",
        "_metadata.file_path as file_path", "_metadata.file_modification_time as mtime")
    rows = df.collect()
    assert {r.file_name for r in rows} == {"0.fermion", "1.fermion"}
    for r in rows:
        assert r.name.endswith("/" + r.file_name) and r.file_path.endswith("/" + r.file_name)
        assert r.size == os.path.getsize(os.path.join(f, r.file_name))
        assert r.mtime is not None
        assert (r.a < 5) == (r.file_name == "0.fermion")
    # datasets too: every row names one of the dataset's data files
    path = tmp_table()
    spark.range(100).write.format("fermion").save(path)
    names = {r[0] for r in spark.read.format("fermion").load(path).selectExpr("input_file_name()").collect()}
    assert names and all("/data/" in n and n.endswith(".fermion") for n in names)
