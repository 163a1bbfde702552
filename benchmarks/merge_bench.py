"""MERGE of 1 % changed rows into a 10M-row table: Fermion's `MERGE INTO` (deletion files plus new
fragments for the changed and inserted rows) against rewriting the whole table with the merge
applied (the same result computed by Spark and written as a new Fermion dataset and as Parquet).
Runs are interleaved; before each MERGE the table is restored to its first version. Reports time
and bytes written, and checks every result has the same rows."""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import machine_line, markdown_table, progress, publish, release_finished_queries, session, size_of  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--changed", type=float, default=0.01, help="share of rows the source updates or inserts")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "merge.md"))
    args = ap.parse_args()
    spark = session("fermion-merge-bench")
    base = tempfile.mkdtemp(prefix="fermion-merge-bench-")
    n = args.rows
    table = os.path.join(base, "target.fermion")
    progress(f"generating {n:,} rows")
    spark.range(0, n, 1, 4).selectExpr(
        "id", "cast(rand(1) * 1000000 as bigint) as k", "rand(2) as x", "uuid(3) as s"
    ).write.format("fermion").save(table)
    original = size_of(spark, table)
    # The source: 90 % of its rows update existing ids (spread over the whole table), 10 % insert.
    m = int(n * args.changed)
    source = spark.range(0, m, 1, 4).selectExpr(
        f"case when id % 10 = 0 then {n} + id else cast(pmod(hash(id, 7), {n}) as bigint) end as id",
        "cast(rand(5) * 1000000 as bigint) as k", "rand(6) as x", "concat('changed-', uuid(7)) as s"
    ).dropDuplicates(["id"])
    source_path = os.path.join(base, "source.parquet")
    source.write.parquet(source_path)
    spark.read.parquet(source_path).createOrReplaceTempView("src")
    spark.read.format("fermion").option("versionAsOf", 1).load(table).createOrReplaceTempView("target_v1")
    merge_sql = (f"MERGE INTO fermion.`{table}` t USING src s ON t.id = s.id "
                 "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    # The merged table computed by Spark from version 1: what a format without row-level changes rewrites.
    merged_sql = ("SELECT coalesce(s.id, t.id) AS id, if(s.id IS NULL, t.k, s.k) AS k, if(s.id IS NULL, t.x, s.x) AS x, "
                  "if(s.id IS NULL, t.s, s.s) AS s FROM target_v1 t FULL OUTER JOIN src s ON t.id = s.id")
    source_rows = spark.read.parquet(source_path).count()
    expected_rows = spark.sql(merged_sql).count()
    times = {"merge": [], "fermion rewrite": [], "parquet rewrite": []}
    written = {}
    for rep in range(args.reps + 1):  # the first round warms up
        for name in times:
            if name == "merge":
                spark.sql(f"RESTORE TABLE fermion.`{table}` TO VERSION AS OF 1")
                before = size_of(spark, table)
                release_finished_queries()
                start = time.perf_counter()
                spark.sql(merge_sql)
                elapsed = time.perf_counter() - start
                written[name] = size_of(spark, table) - before
                got = spark.read.format("fermion").load(table)
            else:
                fmt = name.split()[0]
                out = os.path.join(base, f"rewrite.{fmt}")
                shutil.rmtree(out, ignore_errors=True)
                release_finished_queries()
                start = time.perf_counter()
                spark.sql(merged_sql).write.format(fmt).save(out)
                elapsed = time.perf_counter() - start
                written[name] = size_of(spark, out)
                got = spark.read.format(fmt).load(out)
            assert got.count() == expected_rows, name
            if rep > 0:
                times[name].append(elapsed)
        progress(f"round {rep}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if v))
    changed = spark.read.format("fermion").load(table).where("s LIKE 'changed-%'").count()
    assert changed == source_rows, (changed, source_rows)
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [[name, f"{med[name]:.2f}", f"{med[name] / med['merge']:.1f}x", f"{written[name] / 2**20:,.1f}",
             f"{written[name] / written['merge']:.0f}x"] for name in times]
    publish(spark, args.out, [
        "# MERGE of 1 % changed rows vs rewriting the table", "",
        f"Machine: {machine_line()}. Target: {n:,} rows (id, k bigint, x double, s uuid string) in 4 files, "
        f"{original / 2**20:,.0f} MiB as Fermion. Source: {source_rows:,} rows ({args.changed:.0%} of the target), "
        "9 in 10 updating an existing id spread over the whole table, 1 in 10 inserting a new one. "
        f"`MERGE INTO ... WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *` on Fermion (restored to "
        f"version 1 before each run) against writing the merged table anew (Spark's full outer join of the same "
        f"rows) as Fermion and as Parquet; median of {args.reps} runs after a warm-up, interleaved. `written` is "
        "what each adds to storage (MERGE: new data files and deletion files, plus its manifest and transaction "
        "file). Every result holds the same number of rows; after the MERGE exactly the source's rows carry its values.",
        "",
        markdown_table(["way", "time s", "time vs MERGE", "written MiB", "written vs MERGE"], rows), "",
    ])


if __name__ == "__main__":
    main()
