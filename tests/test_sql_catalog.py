"""Fermion tables in Spark's session catalog, side by side with Parquet (or, where Parquet has no
such behaviour, with Delta's documented one): declared schemas, table options, managed tables,
atomic CREATE OR REPLACE, DESCRIBE, dynamic INSERT OVERWRITE."""
import glob
import os
import urllib.parse

import pytest
from pyspark.errors import AnalysisException

from conftest import error_of, rows_of


def local_path(location):
    return urllib.parse.urlparse(location).path if location.startswith("file:") else location


def columns(spark, table):
    """DESCRIBE's column rows: (name, type, comment)."""
    out = []
    for r in spark.sql(f"DESCRIBE {table}").collect():
        if not r.col_name or r.col_name.startswith("#"):
            break
        out.append((r.col_name, r.data_type, r.comment))
    return out


def details(spark, table):
    """DESCRIBE EXTENDED's detail rows, name -> value."""
    return {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {table}").collect()}


def data_bytes(path):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(path, "data", "*.fermion")))


def test_declared_schema_char_varchar_and_comments_survive_writes(spark, tmp_table, drop):
    """The issue's table: nullable columns stay nullable after an INSERT of non-null literals;
    CHAR/VARCHAR check lengths and pad as for Parquet; comments survive writes."""
    ddl = "(id BIGINT, v STRING, c CHAR(3) COMMENT 'a char', vc VARCHAR(4), st STRUCT<x: INT>)"
    for fmt in ("fermion", "parquet"):
        drop(f"nn_{fmt}")
        spark.sql(f"CREATE TABLE nn_{fmt} {ddl} USING {fmt} LOCATION '{tmp_table(fmt)}'")
        spark.sql(f"INSERT INTO nn_{fmt} VALUES (1, 'a', 'x', 'abcd', named_struct('x', 1))")
        spark.sql(f"INSERT INTO nn_{fmt} VALUES (2, NULL, NULL, NULL, NULL)")
        spark.sql(f"INSERT INTO nn_{fmt} SELECT 3, 'b', 'yz', 'ab ', named_struct('x', NULL)")
        for bad in ["(4, 'b', 'wxyz', 'a', NULL)", "(4, 'b', 'w', 'abcde', NULL)"]:
            assert "EXCEED_LIMIT_LENGTH" in error_of(lambda: spark.sql(f"INSERT INTO nn_{fmt} VALUES {bad}"))
    for query in ["SELECT *, length(c), length(vc) FROM {}", "SELECT id FROM {} WHERE c = 'x'",
                  "SELECT id FROM {} WHERE v IS NULL"]:
        assert rows_of(spark.sql(query.format("nn_fermion"))) == rows_of(spark.sql(query.format("nn_parquet"))), query
    assert columns(spark, "nn_fermion") == columns(spark, "nn_parquet")
    assert ("c", "char(3)", "a char") in columns(spark, "nn_fermion")
    f, p = spark.table("nn_fermion").schema, spark.table("nn_parquet").schema
    assert [(x.name, x.dataType, x.nullable) for x in f] == [(x.name, x.dataType, x.nullable) for x in p]
    assert f["c"].metadata == p["c"].metadata


def test_readme_feats_table_takes_nulls_and_not_null_is_enforced(spark, tmp_table, drop):
    drop("feats_nn")
    spark.sql(f"CREATE TABLE feats_nn (id BIGINT, label BIGINT, score DOUBLE) USING fermion LOCATION '{tmp_table()}'")
    spark.sql("INSERT INTO feats_nn SELECT * FROM range(10) CROSS JOIN (SELECT 1L, 0.5D)")
    spark.sql("INSERT INTO feats_nn VALUES (10, NULL, NULL)")
    assert spark.sql("SELECT count(*) FROM feats_nn WHERE label IS NULL").collect()[0][0] == 1
    # NOT NULL declared is kept and enforced, as in Delta (Parquet tables do not enforce it)
    drop("strict_nn")
    spark.sql(f"CREATE TABLE strict_nn (id BIGINT NOT NULL, v STRING) USING fermion LOCATION '{tmp_table()}'")
    spark.sql("INSERT INTO strict_nn VALUES (1, NULL)")
    assert "NOT_NULL" in error_of(lambda: spark.sql("INSERT INTO strict_nn VALUES (NULL, 'x')"))
    assert [(x.name, x.nullable) for x in spark.table("strict_nn").schema] == [("id", False), ("v", True)]


def test_create_or_replace_table_as_select_is_one_new_version_or_nothing(spark, drop):
    """Parquet tables cannot be replaced atomically (Spark refuses REPLACE TABLE for them); Delta's
    documented behaviour: the replacement is a new version, and a failed one leaves the table."""
    drop("rtas")
    spark.sql("CREATE TABLE rtas USING fermion AS SELECT id, cast(id AS string) AS s FROM range(5)")
    spark.sql("CREATE OR REPLACE TABLE rtas USING fermion AS SELECT id * 10 AS x FROM range(3)")
    assert spark.table("rtas").columns == ["x"] and sorted(r.x for r in spark.table("rtas").collect()) == [0, 10, 20]
    assert [r.operation for r in spark.sql("DESCRIBE HISTORY rtas").collect()] == ["overwrite", "create"]
    assert spark.sql("SELECT count(*) FROM rtas VERSION AS OF 1").collect()[0][0] == 5
    # a failing query: the table, its catalog entry and its data stay as they were
    with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
        spark.sql("CREATE OR REPLACE TABLE rtas USING fermion AS SELECT id, 1 / (id - 2) AS y FROM range(5)")
    assert spark.table("rtas").columns == ["x"] and spark.table("rtas").count() == 3
    assert len(spark.sql("DESCRIBE HISTORY rtas").collect()) == 2
    # REPLACE TABLE without a query: an empty version with the new schema
    spark.sql("REPLACE TABLE rtas (a INT COMMENT 'new') USING fermion")
    assert spark.table("rtas").count() == 0 and columns(spark, "rtas") == [("a", "int", "new")]
    spark.sql("INSERT INTO rtas VALUES (7)")
    assert [r.a for r in spark.table("rtas").collect()] == [7]
    # CTAS over an existing name fails and leaves it
    with pytest.raises(AnalysisException, match="(?i)already exists"):
        spark.sql("CREATE TABLE rtas USING fermion AS SELECT 1 AS b")
    assert spark.table("rtas").columns == ["a"]
    # an external table is replaced where it is
    drop("rtas_ext")
    path = str(local_path(details(spark, "rtas")["Location"])) + "-ext"
    spark.sql(f"CREATE TABLE rtas_ext USING fermion LOCATION '{path}' AS SELECT 1 AS a")
    spark.sql("CREATE OR REPLACE TABLE rtas_ext USING fermion AS SELECT 2 AS a, 3 AS b")
    assert local_path(details(spark, "rtas_ext")["Location"]) == path
    assert [tuple(r) for r in spark.read.format("fermion").load(path).collect()] == [(2, 3)]
    assert details(spark, "rtas_ext")["Type"] == "EXTERNAL"


def test_table_options_and_properties_are_checked_kept_and_used(spark, tmp_table, drop):
    """Parquet ignores a misspelt option silently; Fermion refuses it (like a DataFrame option)."""
    with pytest.raises(Exception, match="compresion"):
        spark.sql(f"CREATE TABLE opt_bad (s STRING) USING fermion OPTIONS (compresion 'none') LOCATION '{tmp_table()}'")
    with pytest.raises(Exception, match="stripeRowz"):
        spark.sql(f"CREATE TABLE opt_bad (s STRING) USING fermion TBLPROPERTIES ('fermion.stripeRowz' = '5') "
                  f"LOCATION '{tmp_table()}'")
    with pytest.raises(Exception, match="lz77"):
        spark.sql(f"CREATE TABLE opt_bad (s STRING) USING fermion OPTIONS (compression 'lz77') LOCATION '{tmp_table()}'")
    assert not spark.catalog.tableExists("opt_bad")
    plain, raw = tmp_table("zstd"), tmp_table("none")
    drop("opt_zstd")
    drop("opt_none")
    spark.sql(f"CREATE TABLE opt_zstd (s STRING) USING fermion LOCATION '{plain}'")
    spark.sql(f"CREATE TABLE opt_none (s STRING) USING fermion OPTIONS (compression 'none') "
              f"TBLPROPERTIES ('owner_team' = 'ml', 'fermion.encodings' = 'plain') LOCATION '{raw}'")
    rows = "SELECT concat('row ', cast(id % 50 AS string), repeat('-', 200)) AS s FROM range(3000)"
    spark.sql(f"INSERT INTO opt_zstd {rows}")
    spark.sql(f"INSERT INTO opt_none {rows}")
    assert data_bytes(raw) > 10 * data_bytes(plain), (data_bytes(raw), data_bytes(plain))
    shown = spark.sql("SHOW CREATE TABLE opt_none").collect()[0][0]
    assert "'compression' = 'none'" in shown and "'owner_team' = 'ml'" in shown, shown
    props = {r.key: r.value for r in spark.sql("SHOW TBLPROPERTIES opt_none").collect()}
    assert props.get("owner_team") == "ml" and props.get("fermion.encodings") == "plain"
    # a write's own options win over the table's
    before = data_bytes(raw)
    spark.sql(rows).writeTo("opt_none").option("compression", "zstd").option("encodings", "all").append()
    assert data_bytes(raw) - before < before / 10
    # changed properties are checked and apply to later writes
    with pytest.raises(Exception, match="nope"):
        spark.sql("ALTER TABLE opt_zstd SET TBLPROPERTIES ('fermion.nope' = '1')")
    spark.sql("ALTER TABLE opt_zstd SET TBLPROPERTIES ('fermion.compression' = 'none', 'fermion.encodings' = 'plain')")
    before = data_bytes(plain)
    spark.sql(f"INSERT INTO opt_zstd {rows}")
    assert data_bytes(plain) - before > 10 * before


def test_insert_overwrite_with_dynamic_partition_overwrite_mode(spark, tmp_table, drop):
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        for fmt in ("fermion", "parquet"):
            drop(f"dyn_{fmt}")
            spark.sql(f"CREATE TABLE dyn_{fmt} (id BIGINT, s STRING) USING {fmt} LOCATION '{tmp_table(fmt)}'")
            spark.sql(f"INSERT INTO dyn_{fmt} VALUES (1, 'a'), (2, 'b')")
            spark.sql(f"INSERT OVERWRITE dyn_{fmt} VALUES (3, 'c')")
            spark.sql(f"INSERT OVERWRITE TABLE dyn_{fmt} SELECT id, 'd' FROM range(4, 6)")
            spark.range(7, 9).selectExpr("id", "'e' AS s").write.mode("overwrite").insertInto(f"dyn_{fmt}")
        assert rows_of(spark.table("dyn_fermion")) == rows_of(spark.table("dyn_parquet")) == [(7, "e"), (8, "e")]
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")


def test_managed_tables_live_under_the_warehouse_and_drop_removes_only_their_data(spark, tmp_table, drop):
    warehouse = local_path(spark.conf.get("spark.sql.warehouse.dir"))
    for fmt in ("fermion", "parquet"):
        drop(f"m_{fmt}")
        spark.sql(f"CREATE TABLE m_{fmt} (id BIGINT) USING {fmt}")
        spark.sql(f"INSERT INTO m_{fmt} VALUES (1), (2)")
    loc = local_path(details(spark, "m_fermion")["Location"])
    assert os.path.dirname(loc.rstrip("/")) == warehouse.rstrip("/") and os.path.isdir(os.path.join(loc, "_versions"))
    assert details(spark, "m_fermion")["Type"] == details(spark, "m_parquet")["Type"] == "MANAGED"
    for fmt in ("fermion", "parquet"):
        spark.sql(f"DROP TABLE m_{fmt}")
    assert not os.path.exists(loc), "DROP TABLE removes a managed table's data"
    # CTAS and saveAsTable without a location, every save mode, compared with Parquet
    for fmt in ("fermion", "parquet"):
        drop(f"ms_{fmt}")
        drop(f"mc_{fmt}")
        spark.sql(f"CREATE TABLE mc_{fmt} USING {fmt} AS SELECT id, id % 3 AS k FROM range(6)")
        df = spark.range(3).selectExpr("id", "id * 2 AS k")
        df.write.format(fmt).saveAsTable(f"ms_{fmt}")
        with pytest.raises(AnalysisException, match="(?i)already exists"):
            df.write.format(fmt).saveAsTable(f"ms_{fmt}")
        df.write.format(fmt).mode("ignore").saveAsTable(f"ms_{fmt}")
        df.write.format(fmt).mode("append").saveAsTable(f"ms_{fmt}")
        spark.range(10, 12).selectExpr("id", "0L AS k").write.format(fmt).mode("append").saveAsTable(f"ms_{fmt}")
    assert rows_of(spark.table("ms_fermion")) == rows_of(spark.table("ms_parquet"))
    assert rows_of(spark.table("mc_fermion")) == rows_of(spark.table("mc_parquet"))
    spark.range(2).selectExpr("id", "9L AS k").write.format("fermion").mode("overwrite").saveAsTable("ms_fermion")
    assert rows_of(spark.table("ms_fermion")) == [(0, 9), (1, 9)]
    assert [r.operation for r in spark.sql("DESCRIBE HISTORY ms_fermion").collect()][-1] == "create"
    # an external table's data stays when it is dropped
    ext = tmp_table("ext")
    drop("m_ext")
    spark.sql(f"CREATE TABLE m_ext (id BIGINT) USING fermion LOCATION '{ext}'")
    spark.sql("INSERT INTO m_ext VALUES (5)")
    assert details(spark, "m_ext")["Type"] == "EXTERNAL"
    spark.sql("DROP TABLE m_ext")
    assert [r.id for r in spark.read.format("fermion").load(ext).collect()] == [5]


def test_describe_extended_shows_provider_location_and_type_as_for_parquet(spark, tmp_table, drop):
    for fmt in ("fermion", "parquet"):
        drop(f"de_{fmt}")
        spark.sql(f"CREATE TABLE de_{fmt} (id BIGINT COMMENT 'key') USING {fmt} "
                  f"COMMENT 'a table' LOCATION '{tmp_table(fmt)}'")
    f, p = details(spark, "de_fermion"), details(spark, "de_parquet")
    assert f["Provider"] == "fermion" and p["Provider"] == "parquet"
    assert f["Type"] == p["Type"] == "EXTERNAL"
    assert local_path(f["Location"]).endswith(os.path.basename(local_path(f["Location"])))
    assert os.path.basename(local_path(f["Location"])).startswith("fermion-")
    assert f.get("Comment") == p.get("Comment") == "a table"
    assert columns(spark, "de_fermion") == columns(spark, "de_parquet") == [("id", "bigint", "key")]
    assert "_rowaddr" in f, "metadata columns are listed"


def test_aggregates_of_a_table_without_rows_match_parquet(spark, drop):
    """CREATE TABLE commits an empty first version: COUNT(*) of it is 0, as for Parquet, not NULL."""
    for fmt in ("fermion", "parquet"):
        drop(f"empty_{fmt}")
        spark.sql(f"CREATE TABLE empty_{fmt} (id INT, s STRING) USING {fmt}")
    q = "SELECT count(*), count(s), min(id), max(id) FROM {}"
    assert spark.sql(q.format("empty_fermion")).collect() == spark.sql(q.format("empty_parquet")).collect() \
        == [(0, 0, None, None)]
