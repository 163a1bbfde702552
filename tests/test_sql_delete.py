"""DELETE through Spark SQL, compared with a Parquet copy filtered by Spark: Spark evaluates the
condition itself (row-level operation), so every predicate, subquery and special value deletes
exactly the rows Spark's own filter selects."""
import datetime
import decimal
import math
import random

import pytest

from conftest import rows_of


def sql_string(s):
    """A Spark SQL string literal (backslash escapes are on by default)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


STRINGS = ["C:\\temp", "C:\temp", "a'b", 'q"q', "100%", "a_c", "abc", "ab", "", " ", "ünï€😀", "line\nbreak",
           "tab\there", "%", "_", "\\", "\\%", "x\\_y", "ABC", "abcd", None]
DATES = [datetime.date(1970, 1, 1), datetime.date(2024, 2, 29), datetime.date(1, 1, 1), datetime.date(9999, 12, 31),
         datetime.date(1969, 12, 31), None]
TIMESTAMPS = [datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), datetime.datetime(1970, 1, 1),
              datetime.datetime(1969, 12, 31, 23, 59, 59, 999999), datetime.datetime(2262, 4, 11, 23, 47, 16), None]
DOUBLES = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf"), 1e300, 5e-324, None]
BINARIES = [b"", b"\x00", b"\x00\x01", b"\xff\xfe", b"abc", None]
DECIMALS = [decimal.Decimal("0.00"), decimal.Decimal("-12.34"), decimal.Decimal("99999999.99"), None]


def make_rows(n, rnd):
    rows = []
    for i in range(n):
        rows.append((
            i,
            rnd.choice([None, -1, 0, 1, 7, 2**31 - 1, -2**31]),
            rnd.choice(DOUBLES),
            rnd.choice([None, 0.5, float("nan"), -1.0]),
            rnd.choice(STRINGS),
            rnd.choice(BINARIES),
            rnd.choice(DATES),
            rnd.choice(TIMESTAMPS),
            rnd.choice(TIMESTAMPS),
            rnd.choice(DECIMALS),
            rnd.choice([True, False, None]),
            rnd.choice([None, 0, 1, 2, 127, -128]),
        ))
    return rows


SCHEMA = ("id bigint, i int, d double, f float, s string, b binary, dt date, ts timestamp, tsn timestamp_ntz, "
          "dec decimal(10,2), bo boolean, ti tinyint")


def literal(column, rnd):
    """A SQL literal for `column`, usually one of its values (so predicates match rows)."""
    if column == "s":
        v = rnd.choice([x for x in STRINGS if x is not None] + ["zz", "C:"])
        return sql_string(v)
    if column in ("i", "ti", "id"):
        return str(rnd.choice([-1, 0, 1, 7, 2, 127, 2**31 - 1, 300, 40]))
    if column in ("d", "f"):
        v = rnd.choice([0.0, -0.0, 1.5, -2.25, 0.5, -1.0, float("nan"), float("inf"), float("-inf"), 1e300])
        t = "DOUBLE" if column == "d" else "FLOAT"
        if math.isnan(v):
            return f"CAST('NaN' AS {t})"
        if math.isinf(v):
            return f"CAST('{'' if v > 0 else '-'}Infinity' AS {t})"
        return f"CAST({v!r} AS {t})" if rnd.random() < 0.5 else repr(v) + ("D" if column == "d" else "")
    if column == "b":
        v = rnd.choice([x for x in BINARIES if x is not None])
        return "X'" + v.hex() + "'"
    if column == "dt":
        v = rnd.choice([x for x in DATES if x is not None])
        return f"DATE'{v.isoformat()}'"
    if column in ("ts", "tsn"):
        v = rnd.choice([x for x in TIMESTAMPS if x is not None])
        kind = "TIMESTAMP" if column == "ts" else "TIMESTAMP_NTZ"
        return f"{kind}'{v.isoformat(sep=' ')}'"
    if column == "dec":
        return rnd.choice(["0", "-12.34", "12.34BD", "99999999.99", "CAST(1 AS DECIMAL(10,2))"])
    if column == "bo":
        return rnd.choice(["true", "false"])
    raise AssertionError(column)


COLUMNS = ["id", "i", "d", "f", "s", "b", "dt", "ts", "tsn", "dec", "bo", "ti"]


def predicate(rnd, depth=0):
    r = rnd.random()
    if depth < 2 and r < 0.15:
        op = rnd.choice(["AND", "OR"])
        return f"({predicate(rnd, depth + 1)} {op} {predicate(rnd, depth + 1)})"
    if depth < 2 and r < 0.2:
        return f"NOT ({predicate(rnd, depth + 1)})"
    c = rnd.choice(COLUMNS)
    kind = rnd.random()
    if kind < 0.1:
        return f"{c} IS {'NOT ' if rnd.random() < 0.5 else ''}NULL"
    if kind < 0.2:
        return f"{c} IN ({', '.join(literal(c, rnd) for _ in range(rnd.randint(1, 3)))})"
    if c == "s" and kind < 0.45:
        v = rnd.choice([x for x in STRINGS if x])
        pattern = rnd.choice([v[:2] + "%", "%" + v[-2:], "%" + v[:1] + "%", v[:1] + "_" + v[2:3], v])
        if (len(pattern) - len(pattern.rstrip("\\"))) % 2 == 1:
            pattern += "%"  # a pattern may not end with its escape character
        form = rnd.choice(["LIKE", "NOT LIKE", "startswith", "endswith", "contains", "ILIKE"])
        if form in ("LIKE", "NOT LIKE", "ILIKE"):
            return f"s {form} {sql_string(pattern)}"
        return f"{form}(s, {sql_string(v[:2])})"
    if c in ("d", "f") and kind < 0.3:
        return f"isnan({c})"
    if c == "bo" and kind < 0.4:
        return rnd.choice(["bo", "NOT bo"])
    op = rnd.choice(["=", "<>", "<", "<=", ">", ">=", "<=>", "!="])
    lit = literal(c, rnd)
    return f"{c} {op} {lit}" if rnd.random() < 0.8 else f"{lit} {op} {c}"


@pytest.fixture(scope="module")
def delete_tables(spark, tmp_path_factory):
    rnd = random.Random(14)
    rows = make_rows(240, rnd)
    base = tmp_path_factory.mktemp("delete")
    df = spark.createDataFrame(rows, SCHEMA).repartition(3)
    df.write.parquet(str(base / "pq"))
    spark.sql(f"CREATE TABLE del_pq USING parquet LOCATION '{base / 'pq'}'")
    spark.sql(f"CREATE TABLE del_f ({SCHEMA}) USING fermion LOCATION '{base / 'f'}'")
    spark.sql("INSERT INTO del_f SELECT /*+ COALESCE(1) */ * FROM del_pq")  # one fragment: one task per DELETE
    yield "del_f", "del_pq"
    spark.sql("DROP TABLE del_f")
    spark.sql("DROP TABLE del_pq")


def test_delete_of_the_issue_string_with_backslashes(spark, tmp_table):
    path = tmp_table()
    spark.sql(f"CREATE TABLE del_bs (id BIGINT, path STRING) USING fermion LOCATION '{path}'")
    try:
        spark.sql("INSERT INTO del_bs VALUES (1, 'C:\\\\temp'), (2, 'C:\\temp')")
        assert {r.id: r.path for r in spark.table("del_bs").collect()} == {1: "C:\\temp", 2: "C:\temp"}
        spark.sql("DELETE FROM del_bs WHERE path = 'C:\\\\temp'")
        assert [(r.id, r.path) for r in spark.table("del_bs").collect()] == [(2, "C:\temp")]
    finally:
        spark.sql("DROP TABLE del_bs")


def test_random_delete_predicates_match_spark_filtering_parquet(spark, delete_tables):
    """A hundred and twenty random predicates over every type (special strings, NaN, +-0, infinities,
    dates, timestamps, binary, decimals, nulls), six DELETEs at a time, each round from the
    original rows again (RESTORE); remaining rows compared with Parquet filtered by Spark."""
    fermion, parquet = delete_tables
    rnd = random.Random(2026)
    rounds, per_round = 20, 6
    checked = 0
    for r in range(rounds):
        spark.sql(f"RESTORE TABLE {fermion} TO VERSION AS OF 2")  # version 2: the inserted rows
        applied = []
        for _ in range(per_round):
            p = predicate(rnd)
            spark.sql(f"DELETE FROM {fermion} WHERE {p}")
            applied.append(p)
        keep = " AND ".join(f"NOT coalesce(({p}), false)" for p in applied)
        expected = rows_of(spark.sql(f"SELECT * FROM {parquet} WHERE {keep}"))
        got = rows_of(spark.table(fermion))
        assert got == expected, f"round {r}: after {applied}"
        checked += per_round
    assert checked >= 120


def test_delete_predicate_kinds_reads_push_down(spark, delete_tables):
    """Each kind the issue lists, one DELETE each, from the original rows."""
    fermion, parquet = delete_tables
    for p in ["s LIKE 'ab%'", "s LIKE '%\\\\%'", "startswith(s, 'C:')", "endswith(s, 'emp')", "s LIKE '%\\\\_%'",
              "dt = DATE'2024-02-29'", "dt < DATE'1970-01-01'", "ts = TIMESTAMP'2024-01-02 03:04:05.123456'",
              "tsn >= TIMESTAMP_NTZ'2024-01-02 03:04:05.123456'", "d = CAST('NaN' AS DOUBLE)", "isnan(f)",
              "d = -0.0D", "b = X'0001'", "b IN (X'', X'FFFE')", "dec = 12.34BD OR dec IS NULL",
              "ti = 300", "i <=> NULL", "s IN ('a''b', 'C:\\\\temp')"]:
        spark.sql(f"RESTORE TABLE {fermion} TO VERSION AS OF 2")
        spark.sql(f"DELETE FROM {fermion} WHERE {p}")
        expected = rows_of(spark.sql(f"SELECT * FROM {parquet} WHERE NOT coalesce(({p}), false)"))
        assert rows_of(spark.table(fermion)) == expected, p


def test_delete_with_subqueries(spark, delete_tables):
    fermion, parquet = delete_tables
    for p in [f"id IN (SELECT id FROM {parquet} WHERE i = 7)",
              f"EXISTS (SELECT 1 FROM {parquet} q WHERE q.id = {fermion}.id + 1 AND q.s IS NULL)",
              f"d > (SELECT avg(d) FROM {parquet} WHERE NOT isnan(d) AND abs(d) < 100)",
              f"id NOT IN (SELECT id FROM {parquet} WHERE id % 3 = 0)"]:
        spark.sql(f"RESTORE TABLE {fermion} TO VERSION AS OF 2")
        spark.sql(f"DELETE FROM {fermion} WHERE {p}")
        q = p.replace(f"{fermion}.id", "o.id")
        expected = rows_of(spark.sql(f"SELECT * FROM {parquet} o WHERE NOT coalesce(({q}), false)"))
        assert rows_of(spark.table(fermion)) == expected, p


def test_delete_without_condition_truncate_and_history(spark, tmp_table):
    path = tmp_table()
    spark.sql(f"CREATE TABLE del_all (id BIGINT) USING fermion LOCATION '{path}'")
    try:
        spark.sql("INSERT INTO del_all SELECT id FROM range(100)")
        spark.sql("DELETE FROM del_all WHERE id >= 90")
        spark.sql("DELETE FROM del_all")
        assert spark.table("del_all").count() == 0
        spark.sql("INSERT INTO del_all VALUES (5)")
        spark.sql("TRUNCATE TABLE del_all")
        assert spark.table("del_all").count() == 0
        ops = [r.operation for r in spark.sql("DESCRIBE HISTORY del_all").collect()]
        assert ops == ["delete", "append", "delete", "delete", "append", "create"], ops
        assert spark.sql("SELECT count(*) FROM del_all VERSION AS OF 3").collect()[0][0] == 90
        spark.sql("INSERT INTO del_all VALUES (1)")
        spark.sql("UPDATE del_all SET id = id + 1")  # row-level changes besides DELETE: test_sql_update_merge.py
        assert [r.id for r in spark.table("del_all").collect()] == [2]
    finally:
        spark.sql("DROP TABLE del_all")
