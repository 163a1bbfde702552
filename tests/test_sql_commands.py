"""Fermion's SQL table commands (DESCRIBE HISTORY / DETAIL, OPTIMIZE, VACUUM, RESTORE, tags), SQL
on paths, Python's typed errors and FermionDataset.restore, and the `--jars` route: a session
configured with nothing but `spark.jars`. Parquet has none of these commands; they follow Delta's
documented behaviour."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import child_env, rows_of
from fermion_spark import errors
from fermion_spark.dataset import FermionDataset


def test_history_detail_optimize_vacuum_restore_and_tags(spark, tmp_table):
    path = tmp_table()
    spark.sql(f"CREATE TABLE cmd_t (id BIGINT, k BIGINT) USING fermion LOCATION '{path}' TBLPROPERTIES ('team' = 'ml')")
    try:
        for i in range(4):  # four small fragments
            spark.sql(f"INSERT INTO cmd_t SELECT /*+ COALESCE(1) */ id, id % 3 FROM range({i * 10}, {i * 10 + 10})")
        spark.sql("DELETE FROM cmd_t WHERE k = 0")
        history = spark.sql("DESCRIBE HISTORY cmd_t").collect()
        assert [(r.version, r.operation) for r in history] == \
            [(6, "delete"), (5, "append"), (4, "append"), (3, "append"), (2, "append"), (1, "create")]
        assert [r.version for r in spark.sql("DESCRIBE HISTORY cmd_t LIMIT 2").collect()] == [6, 5]
        detail = spark.sql("DESCRIBE DETAIL cmd_t").collect()[0]
        assert detail.format == "fermion" and detail.version == 6 and detail.numFragments == 4
        assert detail.numRows == 26 and detail.numDeletedRows == 14 and detail.numDeletionFiles == 4
        assert detail.type == "EXTERNAL" and detail.name == "spark_catalog.default.cmd_t"
        assert detail.properties.get("team") == "ml" and "deletionFiles" in detail.tableFeatures
        assert detail.sizeInBytes > 0 and detail.location.rstrip("/").endswith(os.path.basename(path))
        expected = rows_of(spark.table("cmd_t"))
        spark.conf.set("spark.fermion.optimize.targetRows", "100")
        try:
            opt = spark.sql("OPTIMIZE cmd_t").collect()[0]
        finally:
            spark.conf.unset("spark.fermion.optimize.targetRows")
        assert (opt.versionBefore, opt.version, opt.fragmentsBefore, opt.fragmentsAfter) == (6, 7, 4, 1)
        assert rows_of(spark.table("cmd_t")) == expected
        assert spark.sql("DESCRIBE DETAIL cmd_t").collect()[0].numDeletedRows == 0
        # tags: by SQL, read back by VERSION AS OF 'name'
        spark.sql("ALTER TABLE cmd_t CREATE TAG before_delete AS OF VERSION 5")
        spark.sql("ALTER TABLE cmd_t CREATE TAG IF NOT EXISTS before_delete AS OF VERSION 1")
        assert FermionDataset(spark, path).tags() == {"before_delete": 5}
        assert spark.sql("SELECT count(*) FROM cmd_t VERSION AS OF 'before_delete'").collect()[0][0] == 40
        with pytest.raises(Exception, match="already exists"):
            spark.sql("ALTER TABLE cmd_t CREATE TAG before_delete")
        spark.sql("ALTER TABLE cmd_t CREATE OR REPLACE TAG before_delete AS OF VERSION 4")
        assert FermionDataset(spark, path).tags() == {"before_delete": 4}
        # RESTORE by version and by timestamp
        r = spark.sql("RESTORE TABLE cmd_t TO VERSION AS OF 3").collect()[0]
        assert (r.restoredVersion, r.version, r.rows) == (3, 8, 20)
        assert rows_of(spark.table("cmd_t")) == rows_of(spark.sql("SELECT * FROM cmd_t VERSION AS OF 3"))
        ts = [h for h in spark.sql("DESCRIBE HISTORY cmd_t").collect() if h.version == 7][0].timestamp
        spark.sql(f"RESTORE cmd_t TO TIMESTAMP AS OF '{ts}'")
        assert rows_of(spark.table("cmd_t")) == expected
        # VACUUM: refuses a short retention unless told; a dry run lists, a real run removes
        with pytest.raises(Exception, match="retentionDurationCheck"):
            spark.sql("VACUUM cmd_t RETAIN 0 HOURS")
        assert spark.sql("VACUUM cmd_t").collect()[0].filesRemoved == 0, "default retention: 7 days"
        spark.conf.set("spark.fermion.vacuum.retentionDurationCheck.enabled", "false")
        try:
            time.sleep(0.05)
            listed = [r.path for r in spark.sql("VACUUM cmd_t RETAIN 0 HOURS DRY RUN").collect()]
            assert listed and all(os.path.exists(p.replace("file:", "")) for p in listed)
            done = spark.sql("VACUUM cmd_t RETAIN 0 HOURS").collect()[0]
            assert done.filesRemoved == len(listed) and not any(os.path.exists(p.replace("file:", "")) for p in listed)
        finally:
            spark.conf.unset("spark.fermion.vacuum.retentionDurationCheck.enabled")
        assert rows_of(spark.table("cmd_t")) == expected
        assert spark.sql("SELECT count(*) FROM cmd_t VERSION AS OF 'before_delete'").collect()[0][0] == 30, \
            "tagged versions survive VACUUM"
        spark.sql("ALTER TABLE cmd_t DROP TAG before_delete")
        spark.sql("ALTER TABLE cmd_t DROP TAG IF EXISTS before_delete")
        assert FermionDataset(spark, path).tags() == {}
    finally:
        spark.sql("DROP TABLE cmd_t")


def test_sql_on_paths(spark, tmp_table):
    path = tmp_table()
    spark.sql(f"CREATE TABLE fermion.`{path}` (id BIGINT, s STRING) USING fermion")
    spark.sql(f"INSERT INTO fermion.`{path}` VALUES (1, 'a'), (2, 'b'), (3, NULL)")
    assert rows_of(spark.sql(f"SELECT * FROM fermion.`{path}`")) == [(1, "a"), (2, "b"), (3, None)]
    spark.sql(f"DELETE FROM fermion.`{path}` WHERE s = 'b'")
    spark.sql(f"ALTER TABLE fermion.`{path}` ADD COLUMNS (x DOUBLE)")
    assert spark.read.format("fermion").load(path).columns == ["id", "s", "x"]
    assert [r.operation for r in spark.sql(f"DESCRIBE HISTORY fermion.`{path}`").collect()] == \
        ["project", "delete", "append", "create"]
    assert spark.sql(f"SELECT count(*) FROM fermion.`{path}` VERSION AS OF 2").collect()[0][0] == 3
    assert spark.sql(f"DESCRIBE DETAIL fermion.`{path}`").collect()[0].type == "PATH"
    # Commands after comments; a statement Fermion's parser cannot tokenize (unterminated quote or
    # comment) is Spark's to reject, with Spark's parse error
    assert spark.sql(f"/* audit */ -- note\n desc history fermion.`{path}` limit 1").collect()[0].operation == "project"
    from pyspark.errors import ParseException
    for bad in (f"DESCRIBE HISTORY fermion.`{path}", "SELECT 'open", "SELECT 1 /* open"):
        with pytest.raises(ParseException):
            spark.sql(bad)
    spark.sql(f"CREATE OR REPLACE TABLE fermion.`{path}` USING fermion AS SELECT 9 AS z")
    assert [tuple(r) for r in spark.read.format("fermion").load(path).collect()] == [(9,)]
    assert not any(path in t.name for t in spark.catalog.listTables()), "no catalog entry is made"
    with pytest.raises(Exception, match="does not exist"):
        spark.sql(f"SELECT * FROM fermion.`{path}-nothing`").collect()


def test_python_errors_are_typed_with_one_line_messages(spark, tmp_table):
    path = tmp_table()
    spark.range(1000).write.format("fermion").save(path)
    with pytest.raises(errors.FermionVersionNotFoundError) as info:
        spark.read.format("fermion").option("versionAsOf", 9).load(path).collect()
    assert "\n" not in str(info.value) and "version 9" in str(info.value)
    spark.sql(f"CREATE TABLE err_t USING fermion LOCATION '{path}'")
    try:
        with pytest.raises(errors.FermionVersionNotFoundError):
            spark.sql("SELECT * FROM err_t VERSION AS OF 99").collect()
        with pytest.raises(errors.FermionDatasetError):
            spark.sql("SELECT * FROM err_t VERSION AS OF 'no_such_tag'").collect()
    finally:
        spark.sql("DROP TABLE err_t")
    # a damaged page: the error happens in a task, Spark wraps it in a job failure
    data = os.path.join(path, "data")
    f = os.path.join(data, sorted(os.listdir(data))[0])
    blob = bytearray(open(f, "rb").read())
    # the first page starts at byte 8 (after the file header): its 20-byte header, then its payload
    stored = int.from_bytes(blob[8:12], "little")
    assert stored > 0
    blob[28 + stored // 2] ^= 0x01
    open(f, "wb").write(bytes(blob))
    with pytest.raises(errors.FermionFileError) as info:
        spark.read.format("fermion").load(path).collect()
    assert isinstance(info.value, (errors.FermionChecksumError, errors.InvalidFermionFileError))
    assert os.path.basename(f) in str(info.value) and "\n" not in str(info.value)


def test_dataset_restore_by_version_and_time(spark, tmp_table):
    path = tmp_table()
    spark.range(5).write.format("fermion").save(path)                       # 1
    spark.range(5, 8).write.format("fermion").mode("append").save(path)     # 2
    ds = FermionDataset(spark, path)
    ds.delete("id < 3")                                                     # 3
    ts = ds.versions().where("version = 2").collect()[0].timestamp.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert ds.restore(1) == 4
    assert sorted(r.id for r in spark.read.format("fermion").load(path).collect()) == list(range(5))
    assert ds.restore(timestamp=ts) == 5
    assert sorted(r.id for r in spark.read.format("fermion").load(path).collect()) == list(range(8))
    assert [r.operation for r in ds.versions().orderBy("version").collect()][-2:] == ["restore", "restore"]
    with pytest.raises(errors.FermionVersionNotFoundError):
        ds.restore(42)
    with pytest.raises(ValueError):
        ds.restore()


JARS_ONLY = textwrap.dedent("""
    import sys, tempfile
    from pyspark.sql import SparkSession
    jar, path, auto = sys.argv[1], sys.argv[2], sys.argv[3]
    builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
               .config("spark.jars", jar).config("spark.sql.warehouse.dir", tempfile.mkdtemp()))
    if auto == "off":
        builder = builder.config("spark.fermion.sessionCatalog.autoInstall", "false")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    def attempt(q):
        try:
            return [tuple(r) for r in spark.sql(q).collect()]
        except Exception as e:
            return "ERROR " + str(e).splitlines()[0]
    print("CREATE", attempt(f"CREATE TABLE t (id BIGINT, v STRING) USING fermion LOCATION '{path}'"))
    print("INSERT", attempt("INSERT INTO t VALUES (1, 'a'), (2, NULL)"))
    print("ALTER", attempt("ALTER TABLE t ADD COLUMNS (note STRING)"))
    print("COLUMNS", spark.table("t").columns)
    print("TRAVEL", attempt("SELECT count(*) FROM t VERSION AS OF 1"))
    print("HISTORY", attempt("DESCRIBE HISTORY t"))
    print("DELETE", attempt("DELETE FROM t WHERE id = 1"))
    print("COUNT", attempt("SELECT count(*) FROM t"))
    spark.stop()
""")


def test_jars_route_without_configure_spark_with_fermion(tmp_table, tmp_path):
    """`spark.jars` alone: Spark loads Fermion's session extensions from the jar, which install
    Fermion's session catalog; opting out makes ALTER TABLE fail loudly, naming the setting."""
    import fermion_spark
    script = tmp_path / "jars_only.py"
    script.write_text(JARS_ONLY)
    procs = {auto: subprocess.Popen([sys.executable, str(script), fermion_spark.jar_path(), tmp_table(auto), auto],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
             for auto in ("on", "off")}
    out = {}
    for auto, p in procs.items():
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr[-3000:]
        out[auto] = dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)
    on, off = out["on"], out["off"]
    assert on["ALTER"] == "[]" and on["COLUMNS"] == "['id', 'v', 'note']", on
    assert on["TRAVEL"] == "[(0,)]", on
    assert on["HISTORY"].startswith("[(3, ") and on["COUNT"] == "[(1,)]", on
    assert "spark.sql.catalog.spark_catalog=io.fermion.spark.catalog.FermionSessionCatalog" in off["ALTER"], off
    assert off["COLUMNS"] == "['id', 'v']", off
    # without Fermion's catalog, CREATE TABLE writes no first version: the INSERT is version 1
    assert off["HISTORY"].startswith("[(1, "), "the SQL commands work without Fermion's catalog too"
    assert off["COUNT"] == "[(1,)]", off
