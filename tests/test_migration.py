"""Migration tools end to end: `fermion convert` (Python API on the session's JVM and the
`fermion` console script through spark-submit) and `fermion inspect` (the console script through
java, and the Python API), against Parquet written by pyarrow and by Spark."""
import datetime
import decimal
import glob
import json
import math
import os
import re
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import child_env, normalize, rows_of
from fermion_spark import tools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FERMION = os.path.join(os.path.dirname(sys.executable), "fermion")


def arrow_table(n, seed):
    """Every type Fermion stores, nested ones included, nulls at every level, edge values."""
    def pick(i, k):
        return (i * 7919 + seed * 104729 + k) % 97

    def maybe(i, k, v, rate=9):
        return None if pick(i, k) % rate == 0 else v

    ts0 = datetime.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=datetime.timezone.utc)
    floats = [float("nan"), -0.0, 0.0, float("inf"), -float("inf"), 1e-300, 3.5]
    return pa.table({
        "id": pa.array([seed * 1_000_000 + i for i in range(n)], pa.int64()),
        "b": pa.array([maybe(i, 1, i % 3 == 0) for i in range(n)], pa.bool_()),
        "i8": pa.array([maybe(i, 2, (i % 256) - 128) for i in range(n)], pa.int8()),
        "i16": pa.array([maybe(i, 3, (i * 31) % 65536 - 32768) for i in range(n)], pa.int16()),
        "i32": pa.array([maybe(i, 4, (i * 2654435761) % 2**32 - 2**31) for i in range(n)], pa.int32()),
        "f32": pa.array([maybe(i, 5, floats[i % len(floats)] if i % 5 == 0 else i / 3) for i in range(n)], pa.float32()),
        "f64": pa.array([maybe(i, 6, floats[i % len(floats)] if i % 4 == 0 else i * -1.25) for i in range(n)], pa.float64()),
        "s": pa.array([maybe(i, 7, ["", "ü€😀", f"s{i}", "x" * (i % 300)][i % 4]) for i in range(n)], pa.string()),
        "bin": pa.array([maybe(i, 8, bytes([i % 256, 0, 255]) * (i % 3)) for i in range(n)], pa.binary()),
        "d": pa.array([maybe(i, 9, datetime.date(1969, 12, 31) + datetime.timedelta(days=i * 13)) for i in range(n)], pa.date32()),
        "ts": pa.array([maybe(i, 10, ts0 + datetime.timedelta(microseconds=i * 1_000_003)) for i in range(n)], pa.timestamp("us", tz="UTC")),
        "ts_ntz": pa.array([maybe(i, 11, datetime.datetime(1900, 1, 1) + datetime.timedelta(seconds=i * 86_401)) for i in range(n)], pa.timestamp("us")),
        "dec": pa.array([maybe(i, 12, decimal.Decimal(i * 7 - 5000).scaleb(-2)) for i in range(n)], pa.decimal128(10, 2)),
        "dec38": pa.array([maybe(i, 13, decimal.Decimal(i * 123456789123 - 10**20).scaleb(-6)) for i in range(n)], pa.decimal128(38, 6)),
        "st": pa.array([maybe(i, 14, {"x": maybe(i, 15, i % 10), "tags": maybe(i, 16, [maybe(i, 17 + k, f"t{k}") for k in range(i % 4)])})
                        for i in range(n)], pa.struct([("x", pa.int32()), ("tags", pa.list_(pa.string()))])),
        "l": pa.array([maybe(i, 20, [maybe(i, 21 + k, i * k) for k in range(i % 5)]) for i in range(n)], pa.list_(pa.int64())),
        "m": pa.array([maybe(i, 30, [(f"k{k}", maybe(i, 31 + k, k * 0.5)) for k in range(i % 3)]) for i in range(n)],
                      pa.map_(pa.string(), pa.float64())),
        "ls": pa.array([maybe(i, 40, [maybe(i, 41 + k, {"a": k, "b": maybe(i, 50 + k, f"b{k}")}) for k in range(i % 3)])
                        for i in range(n)], pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())]))),
    })


def pylist_rows(table):
    return [tuple(normalize(v) for v in row.values()) for row in table.to_pylist()]


def parquet_files(path):
    return sorted(f for f in glob.glob(os.path.join(path, "**", "*.parquet"), recursive=True)
                  if not any(p.startswith(("_", ".")) for p in os.path.relpath(f, path).split(os.sep)))


def test_pyarrow_parquet_round_trips_exactly_file_by_file(spark, tmp_table):
    src = tmp_table("pyarrow")
    os.makedirs(src)
    for k in range(3):
        pq.write_table(arrow_table(700 + 300 * k, k), os.path.join(src, f"part-{k}.parquet"), row_group_size=256)
    fermion, back = tmp_table("fermion"), tmp_table("back")
    r1 = tools.convert(spark, src, fermion, to="fermion", progress=False)
    assert (r1["rows"], r1["input_files"], r1["output_files"], r1["version"]) == (3000, 3, 3, 1)
    # Spark sees the same schema and rows in Fermion as in the original Parquet.
    original = spark.read.parquet(src)
    converted = spark.read.format("fermion").load(fermion)
    assert converted.schema == original.schema
    r2 = tools.convert(spark, fermion, back, to="parquet", progress=False)
    assert (r2["rows"], r2["output_files"]) == (3000, 3)
    # pyarrow reads every original file and its converted copy the same: schema and rows in order.
    before, after = parquet_files(src), parquet_files(back)
    assert len(before) == len(after) == 3
    for a, b in zip(before, after):
        ta, tb = pq.read_table(a), pq.read_table(b)
        assert tb.schema.equals(ta.schema, check_metadata=False), f"{a}\n{ta.schema}\n{b}\n{tb.schema}"
        assert pylist_rows(tb) == pylist_rows(ta)
    assert rows_of(spark.read.parquet(back)) == rows_of(original)


def test_partitioned_pyarrow_directory(spark, tmp_table):
    src = tmp_table("partitioned")
    table = arrow_table(1500, 7)
    region = pa.array([["eu", "us", "apac"][i % 3] for i in range(len(table))])
    pq.write_to_dataset(table.append_column("region", region), src, partition_cols=["region"])
    fermion, back = tmp_table("fermion"), tmp_table("back")
    tools.convert(spark, src, fermion, progress=False)
    original = spark.read.parquet(src)
    converted = spark.read.format("fermion").load(fermion)
    assert converted.schema == original.schema and converted.columns[-1] == "region"
    tools.convert(spark, fermion, back, to="parquet", progress=False)
    before, after = parquet_files(src), parquet_files(back)
    assert len(before) == len(after) == 3
    for a, b in zip(before, after):
        value = re.search(r"region=([^/]+)", a).group(1)
        ta = pq.read_table(a)
        ta = ta.append_column("region", pa.array([value] * len(ta)))
        assert pylist_rows(pq.read_table(b)) == pylist_rows(ta)


@pytest.mark.parametrize("name,array", [
    ("time64", lambda n: pa.array([datetime.time(1, 2, 3)] * n, pa.time64("us"))),
    ("timestamp_ns", lambda n: pa.array([1] * n, pa.timestamp("ns", tz="UTC"))),
    ("float16", lambda n: pa.array([1.5] * n, pa.float16())),
])
def test_types_fermion_rejects_fail_before_writing_and_name_the_column(spark, tmp_table, name, array):
    src = tmp_table(name)
    os.makedirs(src)
    pq.write_table(pa.table({"id": pa.array(range(5), pa.int64()), f"bad_{name}": array(5)}), os.path.join(src, "a.parquet"))
    dst = tmp_table("out")
    with pytest.raises(tools.FermionToolError, match=f"`bad_{name}`"):
        tools.convert(spark, src, dst, progress=False)
    assert not os.path.exists(dst)


def run(*args, timeout=600):
    return subprocess.run([FERMION, *args], capture_output=True, text=True, timeout=timeout, env=child_env())


PROGRESS = re.compile(r"^\[fermion convert\] (\d+)/(\d+) files, [\d.]+ (B|KiB|MiB|GiB) of [\d.]+ (B|KiB|MiB|GiB) "
                      r"\((\d+\.\d)%\)(, rate unknown yet|, [\d.]+ (B|KiB|MiB|GiB)/s, (done|.* left)), .* elapsed$")


def test_cli_converts_spark_parquet_both_ways_with_progress(spark, tmp_table):
    src, fermion, back = tmp_table("spark"), tmp_table("fermion"), tmp_table("back")
    # Every type Spark writes to Parquet that Fermion stores, each with nulls.
    df = spark.range(0, 20000, 1, 4).selectExpr(
        "id", "id % 5 AS k", "CASE WHEN id % 3 = 0 THEN NULL ELSE named_struct('a', id, 'b', array(id, NULL)) END AS st",
        "map(cast(id AS string), id * 0.5) AS m", "timestamp_micros(id * 1000003) AS ts",
        "IF(id % 7 = 0, NULL, id % 2 = 0) AS b", "IF(id % 7 = 1, NULL, CAST(id % 256 - 128 AS TINYINT)) AS i8",
        "IF(id % 7 = 2, NULL, CAST(id * 31 % 65536 - 32768 AS SMALLINT)) AS i16",
        "IF(id % 7 = 3, NULL, CAST(id * 2654435761 % 4294967296 - 2147483648 AS INT)) AS i32",
        "IF(id % 7 = 4, NULL, CAST(CASE id % 5 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0.0' ELSE id / 3 END AS FLOAT)) AS f32",
        "IF(id % 7 = 5, NULL, CASE id % 4 WHEN 0 THEN CAST('-Infinity' AS DOUBLE) ELSE id * -1.25 END) AS f64",
        "IF(id % 7 = 6, NULL, substr('xü€😀yz', 1, CAST(id % 7 AS INT))) AS s",
        "IF(id % 6 = 0, NULL, CAST(repeat(chr(CAST(id % 200 AS INT) + 1), CAST(id % 3 AS INT)) AS BINARY)) AS bin",
        "IF(id % 6 = 1, NULL, date_add(DATE'1969-12-31', CAST(id * 13 % 100000 AS INT))) AS d",
        "IF(id % 6 = 2, NULL, CAST(timestamp_micros(id * 86401000000) AS TIMESTAMP_NTZ)) AS ts_ntz",
        "IF(id % 6 = 3, NULL, CAST((id * 7 - 5000) / 100 AS DECIMAL(10, 2))) AS dec",
        "IF(id % 6 = 4, NULL, CAST(id * 123456789123 - 100000000000000000000 AS DECIMAL(38, 6))) AS dec38")
    df.write.partitionBy("k").parquet(src)
    p = run("convert", "--to", "fermion", "--progress-interval", "0.2", "--option", "compressionLevel=5", src, fermion)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stderr.splitlines() if l.startswith("[fermion convert]")]
    assert lines, p.stderr
    for l in lines:
        assert PROGRESS.match(l), l
    last = PROGRESS.match(lines[-1])
    assert last.group(1) == last.group(2) and last.group(5) == "100.0"
    assert "Converted Parquet to Fermion" in p.stdout and "rows:  20,000" in p.stdout and "bytes:" in p.stdout
    assert json.loads(run("inspect", fermion, "--json").stdout)["config"]["fermion.write.compressionLevel"] == "5"
    p = run("convert", "--to", "parquet", "--quiet", "--json", fermion, back)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert result["rows"] == 20000 and result["output_files"] == len(parquet_files(src))
    assert not any(l.startswith("[fermion convert]") for l in p.stderr.splitlines())
    original = spark.read.parquet(src)
    assert spark.read.format("fermion").load(fermion).schema == original.schema
    assert rows_of(spark.read.format("fermion").load(fermion)) == rows_of(original)
    assert spark.read.parquet(back).schema == original.schema
    assert rows_of(spark.read.parquet(back)) == rows_of(original)
    # A destination that exists is refused, with the reason, before anything is written.
    p = run("convert", "--quiet", src, fermion)
    assert p.returncode == 1 and "already holds a Fermion dataset" in p.stderr


@pytest.fixture(scope="module")
def known_file(spark, tmp_path_factory):
    """A one-file dataset of known content: id 0..9999, s null every 10th row, st.a = 2 id."""
    path = str(tmp_path_factory.mktemp("inspect") / "t")
    (spark.range(0, 10000, 1, 1)
     .selectExpr("id", "CASE WHEN id % 10 = 0 THEN NULL ELSE concat('k', lpad(cast(id AS string), 5, '0')) END AS s",
                 "named_struct('a', id * 2) AS st")
     .write.format("fermion").option("stripeRows", "4000").option("bloomFilterColumns", "id").save(path))
    files = glob.glob(os.path.join(path, "data", "*.fermion"))
    assert len(files) == 1
    return path, files[0]


def schema_validator():
    import jsonschema
    with open(os.path.join(ROOT, "docs", "inspect.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_inspect_file_json_matches_known_content_and_schema(known_file):
    _, file = known_file
    p = run("inspect", file, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    schema_validator().validate(report)
    assert report["format_version"] == "1.7" and report["rows"] == 10000
    # format 1.5: a column directory of 3 top-level columns, 32 * 3 + 4 * 1 + 24 bytes (format.md 10.1)
    assert report["settings"]["column_directory"] and report["metadata"]["column_directory_bytes"] == 124
    assert [s["rows"] for s in report["stripes"]] == [4000, 4000, 2000]
    assert [(f["name"], f["field_id"], f["type"]) for f in report["schema"]] == [
        ("id", 0, "int64"), ("s", 1, "string"), ("st", 2, "struct")]
    assert report["schema"][2]["children"][0] == {"name": "a", "field_id": 3, "type": "int64", "nullable": False}
    cols = {c["name"]: c for c in report["columns"]}
    data = {c: next(s for s in cols[c]["streams"] if s["stream_type"] == "DATA") for c in ("id", "s", "st")}
    assert data["id"]["stats"]["min"] == 0 and data["id"]["stats"]["max"] == 9999 and data["id"]["null_count"] == 0
    assert [c["stats"]["min"] for c in data["id"]["chunks"]] == [0, 4000, 8000]
    assert data["id"]["bloom_filter_bytes"] > 0 and data["id"]["pages"] == sum(c["pages"] for c in data["id"]["chunks"])
    assert sum(data["id"]["encodings"].values()) == data["id"]["pages"]
    assert data["s"]["null_count"] == 1000 and data["s"]["stats"]["min"] == "k00001" and "prefix_bounds" in data["s"]["stats"]["flags"]
    assert data["st"]["node"] == "st.a" and data["st"]["stats"]["max"] == 19998
    assert 0 < report["bytes_read"] <= report["file_bytes"]
    assert abs(sum(c["share"] for c in report["columns"]) - sum(c["bytes"] for c in report["columns"]) / report["file_bytes"]) < 1e-9
    narrowed = json.loads(run("inspect", file, "--json", "--column", "s", "--stripe", "2").stdout)
    schema_validator().validate(narrowed)
    assert [c["name"] for c in narrowed["columns"]] == ["s"] and [s["index"] for s in narrowed["stripes"]] == [2]
    text = run("inspect", file, "--stripe", "0").stdout
    for expected in ("format version 1.7", "column directory on", "10,000 rows", "id: int64 not null  (field id 0)", "a: int64 not null  (field id 3)",
                     "min 0  max 3999", "bloom filters", "stripe 0:", "Read "):
        assert expected in text, text


def test_inspect_dataset_and_python_api(spark, known_file, tmp_table):
    path = tmp_table("ds")
    spark.range(100).selectExpr("id", "id % 3 AS k").write.format("fermion").save(path)
    spark.range(100, 150).selectExpr("id", "id % 3 AS k").write.format("fermion").mode("append").save(path)
    from fermion_spark.dataset import FermionDataset
    ds = FermionDataset(spark, path)
    ds.delete("k = 0")
    ds.create_tag("cleaned", 3)
    p = run("inspect", path, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    schema_validator().validate(report)
    assert [v["operation"] for v in report["versions"]] == ["create", "append", "delete"]
    assert [v["rows"] for v in report["versions"]] == [100, 150, 100]
    assert report["versions"][2]["tags"] == ["cleaned"] and report["tags"] == {"cleaned": 3}
    assert sum(f["deletion"]["deleted_rows"] for f in report["fragments"] if f["deletion"]) == 50
    assert sum(f["physical_rows"] for f in report["fragments"]) == 150
    v1 = tools.inspect(path, spark=spark, version=1)
    schema_validator().validate(v1)
    assert v1["version"] == 1 and sum(f["rows"] for f in v1["fragments"]) == 100
    _, file = known_file
    assert tools.inspect(file, spark=spark)["rows"] == 10000
    assert tools.inspect(file)["rows"] == 10000  # a java process, no Spark
    with pytest.raises(tools.FermionToolError, match="no column `nope`"):
        tools.inspect(file, spark=spark, columns=["nope"])
    p = run("inspect", path + "-missing")
    assert p.returncode == 1 and "does not exist" in p.stderr


def test_console_script_keeps_todays_commands():
    import fermion_spark
    assert run("jar").stdout.strip() == fermion_spark.jar_path()
    assert "PySpark 4.3.0" in run("version").stdout
    assert run("nonsense").returncode == 2
    assert "convert" in run("help").stdout and "inspect" in run("help").stdout


def test_sql_convert(spark, tmp_table):
    src, dst = tmp_table("sqlsrc"), tmp_table("sqldst")
    spark.range(300).selectExpr("id", "array(id, id + 1) AS a").write.parquet(src)
    row = spark.sql(f"CONVERT TO FERMION parquet.`{src}` TO '{dst}' OPTIONS (stripeRows = 50)").collect()[0]
    assert row["rows"] == 300 and row["version"] == 1
    assert rows_of(spark.read.format("fermion").load(dst)) == rows_of(spark.read.parquet(src))


def test_describe_detail_counts_the_files_of_a_table_converted_in_place(spark, tmp_table):
    """A table converted in place keeps its data files beside the Parquet files, outside data/:
    DESCRIBE DETAIL counts their bytes too (it once listed data/ alone and reported 0)."""
    src = tmp_table("inplace")
    spark.range(300).selectExpr("id", "id % 3 AS k").write.partitionBy("k").parquet(src)
    spark.sql(f"CONVERT TO FERMION parquet.`{src}`")
    detail = spark.sql(f"DESCRIBE DETAIL fermion.`{src}`").collect()[0]
    on_disk = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(src) for f in fs
                  if f.endswith(".fermion"))
    assert detail.numRows == 300 and detail.numFiles > 0 and detail.numDeletedRows == 0
    assert on_disk > 0 and detail.sizeInBytes == on_disk, (detail.sizeInBytes, on_disk)
