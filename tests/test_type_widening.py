"""Type widening and mergeSchema appends end to end, differential against Parquet: a table written
with narrow types, widened by ALTER TABLE ... ALTER COLUMN ... TYPE (catalog and path tables, top
level, struct fields, array elements, map values), appended with wide values, reads exactly what
Spark gets by casting the Parquet copy of the old rows; filters on widened columns, time travel to
the old types, refused changes; `mergeSchema` appends that add columns and widen types in one
version, and conflict with a concurrent schema change."""
import pytest

from conftest import rows_of
from fermion_spark import errors
from fermion_spark.dataset import FermionDataset

OLD = [
    "id",
    "cast(if(id % 7 = 1, null, id % 200 - 100) as tinyint) as b",
    "cast(if(id % 7 = 2, null, id * 11 % 60000 - 30000) as smallint) as s",
    "cast(if(id % 7 = 3, null, (id * 715827) % 2000000000) as int) as i",
    "cast(if(id % 7 = 4, null, id / 10.0) as float) as f",
    "cast(if(id % 7 = 5, null, (id * 7 - 5000) / 100.0) as decimal(5,2)) as d",
    "if(id % 7 = 6, null, date_add(date'2020-01-01', cast(id as int))) as dt",
    "if(id % 11 = 0, null, named_struct('x', cast(if(id % 5 = 0, null, id * 3) as int), 'y', cast(id as string))) as st",
    "if(id % 13 = 0, null, array(cast(id as int), cast(null as int), cast(id + 1 as int))) as arr",
    "map('k', cast(id % 1000 as smallint), 'n', cast(null as smallint)) as m",
]
NEW = [
    "id",
    "id * 1000000000 as b",
    "cast(70000 + id as int) as s",
    "if(id % 5 = 0, null, 3000000000 + id) as i",
    "id / 10.0d as f",
    "cast(id / 1000.0 as decimal(8,3)) as d",
    "timestamp_ntz'2026-01-01 10:00:00' + make_dt_interval(cast(id - 2000 as int)) as dt",
    "named_struct('x', id * 5000000000, 'y', cast(id as string)) as st",
    "array(id + 4000000000) as arr",
    "map('k', cast(100000 + id as int)) as m",
]
# The new types, as Spark casts the old values to them (the reference).
CASTS = [
    "id",
    "cast(b as bigint) as b",
    "cast(s as int) as s",
    "cast(i as bigint) as i",
    "cast(f as double) as f",
    "cast(d as decimal(8,3)) as d",
    "cast(dt as timestamp_ntz) as dt",
    "cast(st as struct<x: bigint, y: string>) as st",
    "cast(arr as array<bigint>) as arr",
    "cast(m as map<string, int>) as m",
]
ALTERS = [
    ("b", "BIGINT"), ("s", "INT"), ("i", "BIGINT"), ("f", "DOUBLE"), ("d", "DECIMAL(8,3)"),
    ("dt", "TIMESTAMP_NTZ"), ("st.x", "BIGINT"), ("arr.element", "BIGINT"), ("m.value", "INT"),
]


def types(df):
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]


def test_alter_column_type_reads_old_files_widened_same_as_parquet_cast(spark, tmp_table, drop):
    path, parquet = tmp_table(), tmp_table()
    old = spark.range(0, 2000, 1, 2).selectExpr(*OLD)
    old.write.format("fermion").option("stripeRows", "400").save(path)
    old.write.parquet(parquet)
    spark.sql(f"CREATE TABLE widen_t USING fermion LOCATION '{path}'")
    drop("widen_t")
    for column, new_type in ALTERS:
        spark.sql(f"ALTER TABLE widen_t ALTER COLUMN {column} TYPE {new_type}")
    new = spark.range(2000, 2500, 1, 2).selectExpr(*NEW)
    new.write.format("fermion").mode("append").save(path)
    reference = spark.read.parquet(parquet).selectExpr(*CASTS).unionByName(new)
    table = spark.table("widen_t")
    assert types(table) == types(reference)
    assert rows_of(table) == rows_of(reference)
    assert rows_of(spark.read.format("fermion").load(path)) == rows_of(reference)
    # Filters on widened columns: values past the old type's range, timestamps from dates, rescaled decimals.
    for condition in ["i > 2999999999", "i < 1000", "b = -7", "dt >= timestamp_ntz'2022-06-01 00:00:00'",
                      "dt = timestamp_ntz'2020-01-03 00:00:00'", "d < 5.5", "f > 150.25", "st.x > 5000",
                      "i IS NULL", "s IN (70100, -29989)"]:
        assert rows_of(table.where(condition)) == rows_of(reference.where(condition)), condition
    # Aggregates (answered from file statistics where they compare) and take by position.
    aggregates = "min(b), max(b), min(s), max(i), min(dt), max(dt), min(d), max(d), count(i), count(*)"
    assert rows_of(table.selectExpr(*aggregates.split(", "))) == rows_of(reference.selectExpr(*aggregates.split(", ")))
    columns = reference.columns
    taken = FermionDataset(spark, path).take(range(2500), columns).select(*columns)  # without _rowaddr, _rowid
    assert types(taken) == types(reference.select(*columns))
    assert rows_of(taken) == rows_of(reference.select(*columns))
    # Time travel: version 1 has the old types and values.
    v1 = spark.read.format("fermion").option("versionAsOf", 1).load(path)
    assert types(v1) == types(old) and rows_of(v1) == rows_of(old)
    assert rows_of(spark.sql("SELECT * FROM widen_t VERSION AS OF 1")) == rows_of(old)
    detail = spark.sql("DESCRIBE DETAIL widen_t").collect()[0]
    assert "typeWidening" in detail.tableFeatures
    hist = FermionDataset(spark, path).versions().orderBy("version").collect()
    assert [r.operation for r in hist] == ["create"] + ["project"] * len(ALTERS) + ["append"]
    # UPDATE and DELETE read old files widened and write the new types.
    spark.sql("UPDATE widen_t SET i = i + 5000000000, dt = dt + INTERVAL 1 HOUR WHERE id % 10 = 3")
    spark.sql("DELETE FROM widen_t WHERE id % 10 = 4")
    reference = reference.selectExpr(
        *[c if c not in ("i", "dt") else
          f"if(id % 10 = 3, {c} + {'5000000000' if c == 'i' else 'INTERVAL 1 HOUR'}, {c}) as {c}"
          for c in reference.columns]).where("id % 10 != 4")
    assert rows_of(spark.table("widen_t")) == rows_of(reference)
    # Compaction rewrites old files in the new types; the rows stay.
    FermionDataset(spark, path).compact(target_rows=10_000)
    assert rows_of(spark.read.format("fermion").load(path)) == rows_of(reference)


def test_refused_type_changes_name_the_column_and_both_types(spark, tmp_table):
    path = tmp_table()
    spark.range(5).selectExpr("id", "cast(id as int) as i", "cast(id as string) as t", "date'2020-01-01' as dt",
                              "cast(id as decimal(5,2)) as d").write.format("fermion").save(path)
    sql_path = f"fermion.`{path}`"
    spark.sql(f"ALTER TABLE {sql_path} ALTER COLUMN i TYPE BIGINT")  # path tables too
    assert types(spark.read.format("fermion").load(path))[1] == ("i", "bigint")
    # Spark accepts these as up-casts; Fermion does not widen them.
    for column, new_type, words in [("i", "DOUBLE", ["`i`", "int64", "float64"]),
                                    ("dt", "TIMESTAMP", ["`dt`", "date32", "timestamp"]),
                                    ("i", "DECIMAL(20,0)", ["`i`", "int64", "decimal(20,0)"])]:
        with pytest.raises(Exception) as e:
            spark.sql(f"ALTER TABLE {sql_path} ALTER COLUMN {column} TYPE {new_type}")
        assert all(w in str(e.value) for w in words), str(e.value)
    with pytest.raises(Exception):  # narrowing: refused by Spark or by Fermion
        spark.sql(f"ALTER TABLE {sql_path} ALTER COLUMN i TYPE INT")
    ds = FermionDataset(spark, path)
    with pytest.raises(Exception, match="`t`"):
        ds.change_column_type("t", "int")
    with pytest.raises(Exception, match="`d`.*decimal\\(5,2\\).*decimal\\(6,4\\)"):
        ds.change_column_type("d", "decimal(6,4)")  # integer digits 3 -> 2
    assert ds.latest_version() == 2, "only the one widening was committed"
    # The Python helper: a decimal's precision up, same scale.
    assert ds.change_column_type("d", "decimal(12,2)") == 3
    assert types(spark.read.format("fermion").load(path))[4] == ("d", "decimal(12,2)")


def test_merge_schema_append_adds_columns_and_widens_in_one_version(spark, tmp_table):
    path, parquet = tmp_table(), tmp_table()
    old = spark.range(0, 300).selectExpr("id", "cast(id as int) as i", "named_struct('x', cast(id as int)) as st",
                                         "if(id % 3 = 0, null, cast(id as string)) as gone")
    old.write.format("fermion").save(path)
    old.write.parquet(parquet)
    new = spark.range(300, 400).selectExpr("id", "3000000000 + id as i",
                                           "named_struct('x', id * 5000000000, 'z', cast(id as string)) as st",
                                           "id * 0.5d as score")
    # Without mergeSchema: the clear error about differing columns, and nothing committed.
    with pytest.raises(Exception, match="columns are"):
        new.write.format("fermion").mode("append").save(path)
    new.write.format("fermion").mode("append").option("mergeSchema", "true").save(path)
    got = spark.read.format("fermion").load(path)
    assert types(got) == [("id", "bigint"), ("i", "bigint"), ("st", "struct<x:bigint,z:string>"),
                          ("gone", "string"), ("score", "double")]
    reference = spark.read.parquet(parquet).selectExpr(
        "id", "cast(i as bigint) as i", "named_struct('x', cast(st.x as bigint), 'z', cast(null as string)) as st",
        "gone", "cast(null as double) as score").unionByName(new.selectExpr("*", "cast(null as string) as gone"))
    assert rows_of(got.select(*reference.columns)) == rows_of(reference)
    hist = FermionDataset(spark, path).versions().orderBy("version").collect()
    assert [(r.version, r.operation, r.rows) for r in hist] == [(1, "create", 300), (2, "append_with_schema", 400)]
    v1 = spark.read.format("fermion").option("versionAsOf", 1).load(path)
    assert types(v1) == types(old) and rows_of(v1) == rows_of(old)
    assert rows_of(got.where("i > 3000000100")) == rows_of(reference.where("i > 3000000100"))
    # Narrower data into a widened column is read widened too; a type neither way fails, naming it.
    # Columns the data lacks (`gone`, `score`) read null in its rows.
    spark.range(400, 410).selectExpr("id", "cast(id as int) as i", "named_struct('x', cast(id as int), 'z', 'a') as st") \
        .write.format("fermion").mode("append").option("mergeSchema", "true").save(path)
    tail = spark.read.format("fermion").load(path).where("id >= 400").orderBy("id").collect()
    assert [(r.i, r.st.x, r.gone, r.score) for r in tail] == [(i, i, None, None) for i in range(400, 410)]
    assert [r.operation for r in FermionDataset(spark, path).versions().orderBy("version").collect()][-1] == "append"
    with pytest.raises(Exception, match="`i`.*int64.*string"):
        spark.range(1).selectExpr("id", "'x' as i").write.format("fermion").mode("append") \
            .option("mergeSchema", "true").save(path)
    with pytest.raises(Exception, match="lacks column `id`, which is NOT NULL"):
        spark.range(1).selectExpr("id as other").write.format("fermion").mode("append") \
            .option("mergeSchema", "true").save(path)
    assert FermionDataset(spark, path).latest_version() == 3
    detail = spark.sql(f"DESCRIBE DETAIL fermion.`{path}`").collect()[0]
    assert "typeWidening" in detail.tableFeatures


def test_merge_schema_append_after_another_schema_change_and_on_a_new_path(spark, tmp_table):
    # (The conflict of a mergeSchema append with a schema change committed while it runs is
    # checked in core's TypeWideningSuite: Python cannot commit between a write's plan and commit.)
    path = tmp_table()
    spark.range(10).write.format("fermion").save(path)
    FermionDataset(spark, path).add_columns("note string")
    spark.range(10, 20).selectExpr("id", "id as extra").write.format("fermion").mode("append") \
        .option("mergeSchema", "true").save(path)
    got = spark.read.format("fermion").load(path)
    assert got.columns == ["id", "note", "extra"]
    assert sorted(r.extra for r in got.where("id >= 10").collect()) == list(range(10, 20))
    assert got.where("id < 10 and extra is not null").count() == 0
    # On a path without a dataset, mergeSchema just creates it.
    fresh = tmp_table()
    spark.range(3).write.format("fermion").mode("append").option("mergeSchema", "true").save(fresh)
    assert [r.operation for r in FermionDataset(spark, fresh).versions().collect()] == ["append"]


def test_merge_and_insert_with_schema_evolution_add_columns_and_widen(spark, tmp_table, drop):
    """SQL's schema evolution: Spark alters the Fermion table (new columns, wider types: one
    `project` version each) and then writes; rows written before read null in the new columns."""
    path = tmp_table()
    spark.sql(f"CREATE TABLE evo (id BIGINT, v INT) USING fermion LOCATION '{path}'")
    drop("evo")
    spark.sql("INSERT INTO evo VALUES (1, 10), (2, 20)")
    spark.sql("MERGE WITH SCHEMA EVOLUTION INTO evo t USING (SELECT 2L AS id, 21 AS v, 'x' AS note "
              "UNION ALL SELECT 3L, 30, 'y') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    spark.sql("MERGE WITH SCHEMA EVOLUTION INTO evo t USING (SELECT 4L AS id, 5000000000L AS v, 'z' AS note) s "
              "ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    spark.sql("INSERT WITH SCHEMA EVOLUTION INTO evo SELECT 5L AS id, 1L AS v, 'w' AS note, true AS flag")
    got = spark.table("evo")
    assert got.schema.simpleString() == "struct<id:bigint,v:bigint,note:string,flag:boolean>"
    expected = spark.createDataFrame(
        [(1, 10, None, None), (2, 21, "x", None), (3, 30, "y", None), (4, 5000000000, "z", None), (5, 1, "w", True)],
        "id bigint, v bigint, note string, flag boolean")
    assert rows_of(got) == rows_of(expected)
    ops = [r.operation for r in spark.sql("DESCRIBE HISTORY evo").orderBy("version").collect()]
    assert ops == ["create", "append", "project", "update", "project", "append", "project", "append"], ops
    # The first version still reads as it was written.
    v2 = spark.read.format("fermion").option("versionAsOf", 2).load(path)
    assert v2.schema.simpleString() == "struct<id:bigint,v:int>" and rows_of(v2) == [(1, 10), (2, 20)]
