"""UPDATE and MERGE INTO on Fermion tables, differential: every statement runs on a Fermion table,
and the table it should produce is computed by Spark from a Parquet copy of the previous state
(a projection for UPDATE, a full outer join for MERGE), written as Parquet and compared row for
row after every step; at the end every version is read back by time travel."""
import random

import pytest
from pyspark.sql import functions as F

from conftest import error_of, rows_of
from test_sql_delete import COLUMNS, SCHEMA, make_rows, predicate

from fermion_spark.dataset import FermionDataset


def _set_clause(rnd):
    """A few random assignments `column = expression` over the row's own columns."""
    exprs = {
        "i": ["i + 1", "-i", "NULL", "CAST(id % 5 AS INT)"],
        "d": ["d * 2", "-d", "CAST('NaN' AS DOUBLE)", "NULL", "0.0D"],
        "s": ["concat(s, '!')", "upper(s)", "NULL", "'C:\\\\new'", "CAST(id AS STRING)"],
        "dt": ["date_add(dt, 1)", "NULL", "DATE'2001-02-03'"],
        "dec": ["dec + 1", "NULL", "CAST(-0.5 AS DECIMAL(10,2))"],
        "bo": ["NOT bo", "true", "NULL"],
        "b": ["X'00FF'", "NULL"],
        "ts": ["ts + INTERVAL 1 DAY", "NULL"],
    }
    cols = rnd.sample(sorted(exprs), rnd.randint(1, 3))
    return {c: rnd.choice(exprs[c]) for c in cols}


def _updated(spark, view, assignments, condition):
    """Spark's own projection of an UPDATE: the assigned columns where the condition is true."""
    cast_to = dict(spark.table(view).dtypes)
    out = []
    for c in COLUMNS:
        if c in assignments:
            out.append(f"CASE WHEN coalesce(({condition}), false) THEN CAST(({assignments[c]}) AS {cast_to[c]}) "
                       f"ELSE {c} END AS {c}")
        else:
            out.append(c)
    return spark.sql(f"SELECT {', '.join(out)} FROM {view}")


def _merged(spark, target, source):
    """Spark's own evaluation of the MERGE that `_merge_sql` builds, as a full outer join:
    matched rows deleted when the source says so, else updated; unmatched source rows inserted;
    target rows no source row matches deleted (id % 7 = 0) or flagged (id % 7 = 1)."""
    return spark.sql(f"""
        SELECT * FROM (
          SELECT
            CASE WHEN t.id IS NOT NULL THEN t.id ELSE s.id END AS id,
            CASE WHEN t.id IS NOT NULL AND s.id IS NOT NULL THEN s.i ELSE t.i END AS i,
            CASE WHEN t.id IS NULL THEN s.d ELSE t.d END AS d,
            t.f AS f,
            CASE WHEN t.id IS NOT NULL AND s.id IS NOT NULL THEN concat(coalesce(t.s, ''), s.s)
                 WHEN t.id IS NULL THEN s.s ELSE t.s END AS s,
            t.b AS b, t.dt AS dt, t.ts AS ts, t.tsn AS tsn, t.dec AS dec,
            CASE WHEN t.id IS NOT NULL AND s.id IS NULL AND t.id % 7 = 1 THEN true ELSE t.bo END AS bo,
            t.ti AS ti,
            CASE WHEN t.id IS NOT NULL AND s.id IS NOT NULL AND s.op = 'delete' THEN 'drop'
                 WHEN t.id IS NOT NULL AND s.id IS NULL AND t.id % 7 = 0 THEN 'drop'
                 ELSE 'keep' END AS action
          FROM {target} t FULL OUTER JOIN {source} s ON t.id = s.id
        ) WHERE action = 'keep'
    """).drop("action")


def _merge_sql(target, source):
    return f"""
        MERGE INTO {target} t USING {source} s ON t.id = s.id
        WHEN MATCHED AND s.op = 'delete' THEN DELETE
        WHEN MATCHED THEN UPDATE SET i = s.i, s = concat(coalesce(t.s, ''), s.s)
        WHEN NOT MATCHED THEN INSERT (id, i, d, s) VALUES (s.id, NULL, s.d, s.s)
        WHEN NOT MATCHED BY SOURCE AND t.id % 7 = 0 THEN DELETE
        WHEN NOT MATCHED BY SOURCE AND t.id % 7 = 1 THEN UPDATE SET bo = true
    """


def _source(spark, rnd, ids, next_id):
    """MERGE source rows: some existing ids (updated or deleted), some new ones (inserted)."""
    rows = []
    for i in rnd.sample(ids, min(len(ids), rnd.randint(5, 40))):
        rows.append((i, rnd.choice([None, 3, 99]), rnd.choice([None, 1.25]), rnd.choice(["+u", "é", ""]),
                     rnd.choice(["update", "update", "delete"])))
    for k in range(rnd.randint(0, 15)):
        rows.append((next_id + k, rnd.choice([None, 5]), rnd.choice([None, -2.5]), rnd.choice([None, "new"]), "insert"))
    return spark.createDataFrame(rows, "id bigint, i int, d double, s string, op string")


@pytest.fixture(params=[False, True], ids=["plain", "stable-row-ids"])
def fermion_table(spark, tmp_path, request):
    """The table of the differential test, in three fragments; with stable row ids or without."""
    rows = make_rows(600, random.Random(20))
    path = str(tmp_path / "f")
    spark.createDataFrame(rows, SCHEMA).repartition(3).createOrReplaceTempView("um_rows")
    if request.param:
        spark.table("um_rows").write.format("fermion").option("stableRowIds", "true").save(path)
        spark.sql(f"CREATE TABLE um_f USING fermion LOCATION '{path}'")
    else:
        spark.sql(f"CREATE TABLE um_f ({SCHEMA}) USING fermion LOCATION '{path}'")
        spark.sql("INSERT INTO um_f SELECT * FROM um_rows")
    yield "um_f", path, request.param
    spark.sql("DROP TABLE IF EXISTS um_f")


def _row_ids(spark, table):
    return {r.id: r._rowid for r in spark.table(table).select("id", "_rowid").collect()}


def test_random_updates_merges_deletes_and_inserts_match_spark_on_parquet(spark, fermion_table, tmp_path):
    """Twelve random steps; after each the Fermion table equals Spark's result on the Parquet copy
    of the previous state, and every version reads back by time travel at the end. With stable row
    ids, every row keeps its `_rowid` through updates and merges, and new rows get new ones."""
    table, path, stable = fermion_table
    rnd = random.Random(7)
    ids_before = _row_ids(spark, table)
    seen_ids = set(ids_before.values())
    assert (None in seen_ids) != stable
    spark.table(table).write.parquet(str(tmp_path / "ref-0"))
    versions = [(spark.sql(f"DESCRIBE HISTORY {table}").agg(F.max("version")).first()[0], str(tmp_path / "ref-0"))]
    next_id = 10_000
    for step in range(1, 13):
        spark.read.parquet(versions[-1][1]).createOrReplaceTempView("um_prev")
        kind = ["update", "merge", "update", "delete", "merge", "insert"][step % 6]
        if kind == "update":
            assignments, cond = _set_clause(rnd), predicate(rnd)
            spark.sql(f"UPDATE {table} SET {', '.join(f'{c} = {e}' for c, e in assignments.items())} WHERE {cond}")
            expected = _updated(spark, "um_prev", assignments, cond)
            what = f"UPDATE {assignments} WHERE {cond}"
        elif kind == "merge":
            ids = [r.id for r in spark.table("um_prev").select("id").collect()]
            _source(spark, rnd, ids, next_id).createOrReplaceTempView("um_src")
            next_id += 100
            spark.sql(_merge_sql(table, "um_src"))
            expected = _merged(spark, "um_prev", "um_src")
            what = "MERGE"
        elif kind == "delete":
            cond = predicate(rnd)
            spark.sql(f"DELETE FROM {table} WHERE {cond}")
            expected = spark.sql(f"SELECT * FROM um_prev WHERE NOT coalesce(({cond}), false)")
            what = f"DELETE WHERE {cond}"
        else:
            new = spark.createDataFrame(make_rows(20, rnd), SCHEMA).withColumn("id", F.col("id") + next_id)
            next_id += 100
            new.createOrReplaceTempView("um_new")
            spark.sql(f"INSERT INTO {table} SELECT * FROM um_new")
            expected = spark.sql("SELECT * FROM um_prev UNION ALL SELECT * FROM um_new")
            what = "INSERT"
        ref = str(tmp_path / f"ref-{step}")
        expected.write.parquet(ref)
        assert rows_of(spark.table(table)) == rows_of(spark.read.parquet(ref)), f"step {step}: {what}"
        if stable:
            ids_now = _row_ids(spark, table)
            kept = {i: r for i, r in ids_now.items() if i in ids_before}
            assert kept == {i: ids_before[i] for i in kept}, f"step {step}: {what} changed row ids"
            new = [r for i, r in ids_now.items() if i not in ids_before]
            assert len(set(new)) == len(new) and not set(new) & seen_ids, f"step {step}: new rows reuse ids"
            assert len(set(ids_now.values())) == len(ids_now)
            seen_ids |= set(new)
            ids_before = ids_now
        latest = spark.sql(f"DESCRIBE HISTORY {table}").agg(F.max("version")).first()[0]
        if latest != versions[-1][0]:
            versions.append((latest, ref))
        else:
            versions[-1] = (latest, ref)  # nothing changed: no new version
    assert len(versions) >= 10
    for version, ref in versions:
        got = spark.read.format("fermion").option("versionAsOf", version).load(path)
        assert rows_of(got) == rows_of(spark.read.parquet(ref)), f"version {version}"
    ops = {r.operation for r in spark.sql(f"DESCRIBE HISTORY {table}").collect()}
    assert {"update", "delete", "append"} <= ops
    if stable:
        # Compaction carries every row's id; a lookup by id finds the row's latest version.
        FermionDataset(spark, path).compact(target_rows=100_000)
        assert _row_ids(spark, table) == ids_before
        assert rows_of(spark.table(table)) == rows_of(spark.read.parquet(versions[-1][1]))
        some = sorted(ids_before.items())[::37]
        got = spark.table(table).where(F.col("_rowid").isin([r for _, r in some])).select("id", "_rowid").collect()
        assert sorted((r.id, r._rowid) for r in got) == some


def test_update_rewrites_only_the_changed_rows(spark, tmp_table):
    """An UPDATE keeps untouched rows where they are (same `_rowaddr`): the changed ones are
    deleted in place and written as one new fragment."""
    path = tmp_table()
    spark.range(0, 1000, 1, 2).selectExpr("id", "id * 2 AS v").write.format("fermion").save(path)
    before = {r.id: r._rowaddr for r in spark.read.format("fermion").load(path).select("id", "_rowaddr").collect()}
    old_fragments = {a >> 32 for a in before.values()}
    spark.sql(f"UPDATE fermion.`{path}` SET v = -1 WHERE id % 100 = 0")
    after = spark.read.format("fermion").load(path).select("id", "v", "_rowaddr").collect()
    assert sorted((r.id, r.v) for r in after) == [(i, -1 if i % 100 == 0 else i * 2) for i in range(1000)]
    moved = {r.id for r in after if r._rowaddr != before[r.id]}
    assert moved == set(range(0, 1000, 100))
    new_fragments = {r._rowaddr >> 32 for r in after if r.id in moved}
    assert not new_fragments & old_fragments and len(new_fragments) <= 2, "updated rows: new fragments, one per task"
    history = spark.sql(f"DESCRIBE HISTORY fermion.`{path}`").orderBy("version").collect()
    assert history[-1].operation == "update" and len(history) == 2


def test_update_of_a_partition_column_moves_rows(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 200, 1, 2).selectExpr("id", "CAST(id % 4 AS INT) AS k") \
        .write.format("fermion").partitionBy("k").save(path)
    spark.sql(f"UPDATE fermion.`{path}` SET k = 9 WHERE k = 1 AND id < 100")
    got = spark.read.format("fermion").load(path)
    assert sorted((r.id, r.k) for r in got.collect()) == sorted(
        (i, 9 if i % 4 == 1 and i < 100 else i % 4) for i in range(200))
    assert got.where("k = 9").count() == 25
    assert spark.read.format("fermion").load(path).where("k = 1").count() == 25


def test_merge_through_the_dataframe_api_and_the_python_dataset_api(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 100).selectExpr("id", "'old' AS s").write.format("fermion").save(path)
    src = spark.range(90, 110).selectExpr("id", "'new' AS s")
    # The target's columns are qualified by the last part of its name: the path.
    src.alias("source").mergeInto(f"fermion.`{path}`", F.expr(f"`{path}`.id = source.id")) \
        .whenMatched().updateAll().whenNotMatched().insertAll().merge()
    got = {r.id: r.s for r in spark.read.format("fermion").load(path).collect()}
    assert got == {i: ("new" if i >= 90 else "old") for i in range(110)}
    ds = FermionDataset(spark, path)
    v = ds.update({"s": "upper(s)"}, "id < 3")
    assert v == ds.latest_version()
    got = {r.id: r.s for r in spark.read.format("fermion").load(path).where("id < 5").collect()}
    assert got == {0: "OLD", 1: "OLD", 2: "OLD", 3: "old", 4: "old"}
    ds.update({"s": "'all'"})
    assert {r.s for r in spark.read.format("fermion").load(path).collect()} == {"all"}
    assert "at least one column" in error_of(lambda: ds.update({}))


def test_stable_row_ids_survive_update_merge_and_compaction(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 50).selectExpr("id", "'a' AS s").write.format("fermion").option("stableRowIds", "true").save(path)
    ids = {r.id: r._rowid for r in spark.read.format("fermion").load(path).select("id", "_rowid").collect()}
    spark.sql(f"UPDATE fermion.`{path}` SET s = 'u' WHERE id % 2 = 0 AND id < 10")  # ids listed, not a range
    spark.sql(f"MERGE INTO fermion.`{path}` t USING (SELECT id FROM range(45, 55)) s ON t.id = s.id "
              "WHEN MATCHED AND t.id = 49 THEN DELETE WHEN MATCHED THEN UPDATE SET s = 'm' "
              "WHEN NOT MATCHED THEN INSERT (id, s) VALUES (s.id, 'i')")
    df = spark.read.format("fermion").load(path)
    after = {r.id: (r._rowid, r.s) for r in df.select("id", "_rowid", "s").collect()}
    assert sorted(after) == [i for i in range(55) if i != 49]
    assert all(after[i][0] == ids[i] for i in range(49)), "updated and untouched rows keep their row ids"
    assert {after[i][1] for i in range(0, 10, 2)} == {"u"} and {after[i][1] for i in range(45, 49)} == {"m"}
    assert {after[i][1] for i in range(1, 10, 2)} == {"a"}
    assert len({after[i][0] for i in range(50, 55)} | set(ids.values())) == 55, "inserted rows get new row ids"
    # The pushed-down lookup by `_rowid` finds the live copy of an updated row.
    lookup = df.where(f"_rowid IN ({ids[4]}, {ids[46]})").select("id", "s")
    assert "Take" in lookup._jdf.queryExecution().executedPlan().toString()
    assert sorted((r.id, r.s) for r in lookup.collect()) == [(4, "u"), (46, "m")]
    features = spark.sql(f"DESCRIBE DETAIL fermion.`{path}`").first().tableFeatures
    assert "stableRowIds" in features and "rowIdSequences" in features, features
    FermionDataset(spark, path).compact(target_rows=1000)
    compacted = {r.id: (r._rowid, r.s) for r in spark.read.format("fermion").load(path)
                 .select("id", "_rowid", "s").collect()}
    assert compacted == after
    rows = FermionDataset(spark, path).take_rows([ids[4], ids[1], ids[46]], columns=["id", "s"]).collect()
    assert [(r.id, r.s) for r in rows] == [(4, "u"), (1, "a"), (46, "m")]


def test_merge_conflicts_and_errors_are_typed(spark, tmp_table):
    path = tmp_table()
    spark.range(0, 10).write.format("fermion").save(path)
    # Two source rows for one target row: Spark's own cardinality check, nothing committed.
    msg = error_of(lambda: spark.sql(
        f"MERGE INTO fermion.`{path}` t USING (SELECT 1L AS id UNION ALL SELECT 1L) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET id = 100"))
    assert "MERGE_CARDINALITY_VIOLATION" in msg or "matched multiple" in msg.lower(), msg
    assert len(spark.sql(f"DESCRIBE HISTORY fermion.`{path}`").collect()) == 1
    batch = tmp_table()
    spark.range(0, 10).selectExpr("id", "id % 2 AS b").write.format("fermion").option("batchKey", "b").save(batch)
    msg = error_of(lambda: spark.sql(f"UPDATE fermion.`{batch}` SET id = 0"))
    assert "batchKey" in msg, msg


def test_merge_into_a_new_empty_table_inserts(spark, tmp_table, drop):
    path = tmp_table()
    spark.sql(f"CREATE TABLE um_empty (id BIGINT, s STRING) USING fermion LOCATION '{path}'")
    drop("um_empty")
    spark.sql("MERGE INTO um_empty t USING (SELECT id, 'x' AS s FROM range(3)) s ON t.id = s.id "
              "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *")
    assert sorted((r.id, r.s) for r in spark.table("um_empty").collect()) == [(0, "x"), (1, "x"), (2, "x")]
    spark.sql("UPDATE um_empty SET s = 'y' WHERE id = 1")
    spark.sql("MERGE INTO um_empty t USING (SELECT 2L AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert sorted((r.id, r.s) for r in spark.table("um_empty").collect()) == [(0, "x"), (1, "y")]
