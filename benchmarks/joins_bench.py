"""Star joins with runtime filters (`runtimeFilters`): a fact table sorted by its date key joined
with a filtered date dimension, Fermion with the option on and off against Parquet (zstd), runs
interleaved, every answer checked equal to Parquet's. With the option, Spark's dynamic pruning
sends the scan the dimension's keys and the stripes without them are skipped; Parquet (not
partitioned) reads every row group. A join on an unsorted key shows what happens where no stripe
can be skipped: no runtime filter is offered.

    benchmarks/run.sh joins [--rows N] [--reps N]

Writes benchmarks/results/joins.md.
"""
import argparse
import os
import tempfile

from harness import machine_line, markdown_table, progress, publish, session, timed_side_by_side

DAYS = 3650


def measure(spark, label, texts, reps, pruned_in):
    """Checks that every variant of a query (`texts`, by name) answers as "parquet" does, tells
    whether Spark planned dynamic pruning into the scan of variant `pruned_in`, and times the
    variants interleaved: (pruned, {name: seconds})."""
    answers = {v: sorted(tuple(r) for r in spark.sql(t).collect()) for v, t in texts.items()}
    for v in texts:
        assert answers[v] == answers["parquet"], (label, v)
    df = spark.sql(texts[pruned_in])
    df.collect()
    pruned = "dynamicpruning" in df._jdf.queryExecution().executedPlan().toString()
    times = timed_side_by_side({v: (lambda t=t: spark.sql(t).collect()) for v, t in texts.items()}, reps=reps)
    progress(f"{label}: " + ", ".join(f"{v} {times[v]:.3f}s" for v in texts))
    return pruned, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "joins.md"))
    args = ap.parse_args()
    spark = session("fermion-joins-bench")
    base = tempfile.mkdtemp(prefix="fermion-joins-bench-")
    n = args.rows
    progress(f"generating {n:,} sales rows over {DAYS} days, sorted by day")
    per_day = max(1, n // DAYS)
    sales = spark.range(n, numPartitions=4).selectExpr(
        f"cast(id / {per_day} as int) AS day_key", "cast(rand(1) * 500 as int) AS store_key",
        "cast(rand(2) * 1000 as decimal(10, 2)) AS amount", "cast(rand(3) * 20 as int) AS quantity")
    days = spark.range(DAYS).selectExpr(
        "cast(id as int) AS day_key", "2016 + cast(id / 365 as int) AS year", "1 + cast(id % 365 / 31 as int) AS month",
        "date_add(date'2016-01-01', cast(id as int)) AS day")
    stores = spark.range(500).selectExpr("cast(id as int) AS store_key", "cast(id % 50 as int) AS region")
    # The same sales partitioned by month (120 partitions): Spark prunes partitions by the join's
    # keys in both formats (dynamic partition pruning), whatever runtimeFilters says.
    by_month = sales.withColumn("month_key", (sales.day_key / 30.42).cast("int"))
    months = spark.range(120).selectExpr("cast(id as int) AS month_key", "2016 + cast(id / 12 as int) AS year",
                                         "cast(id % 12 as int) + 1 AS month")
    paths = {}
    for name, df in (("sales", sales), ("days", days), ("stores", stores)):
        for fmt in ("fermion", "parquet"):
            p = os.path.join(base, f"{name}.{fmt}")
            df.write.format(fmt).save(p)
            paths[(name, fmt)] = p
    for fmt in ("fermion", "parquet"):
        p = os.path.join(base, f"sales_by_month.{fmt}")
        by_month.write.format(fmt).partitionBy("month_key").save(p)
        spark.read.format(fmt).load(p).createOrReplaceTempView(f"sales_by_month_{fmt}")
        mp = os.path.join(base, f"months.{fmt}")
        months.write.format(fmt).save(mp)
        spark.read.format(fmt).load(mp).createOrReplaceTempView(f"months_{fmt}")
    progress("written")
    # Variant name -> (format, runtimeFilters); views are named <table>_<variant>.
    variants = {"fermion_rf": ("fermion", True), "fermion": ("fermion", False), "parquet": ("parquet", False)}
    for v, (fmt, rf) in variants.items():
        r = spark.read.format(fmt)
        if rf:
            r = r.option("runtimeFilters", "true")
        r.load(paths[("sales", fmt)]).createOrReplaceTempView(f"sales_{v}")
        spark.read.format(fmt).load(paths[("days", fmt)]).createOrReplaceTempView(f"days_{v}")
        spark.read.format(fmt).load(paths[("stores", fmt)]).createOrReplaceTempView(f"stores_{v}")
    queries = [
        ("one year (10 % of days)", "SELECT d.month, sum(s.amount), count(*) FROM sales_{v} s JOIN days_{v} d "
         "ON s.day_key = d.day_key WHERE d.year = 2020 GROUP BY d.month"),
        ("one month (0.8 %)", "SELECT d.day, sum(s.amount * s.quantity) FROM sales_{v} s JOIN days_{v} d "
         "ON s.day_key = d.day_key WHERE d.year = 2022 AND d.month = 7 GROUP BY d.day"),
        ("30 scattered days (0.8 %)", "SELECT d.year, sum(s.amount) FROM sales_{v} s JOIN days_{v} d "
         "ON s.day_key = d.day_key WHERE d.day_key % 121 = 7 GROUP BY d.year"),
        ("unsorted key: 10 of 500 stores", "SELECT st.region, sum(s.amount) FROM sales_{v} s JOIN stores_{v} st "
         "ON s.store_key = st.store_key WHERE st.region = 7 GROUP BY st.region"),
    ]
    rows = []
    for label, q in queries:
        pruned, times = measure(spark, label, {v: q.format(v=v) for v in variants}, args.reps, "fermion_rf")
        rows.append([label, "yes" if pruned else "no", f"{times['fermion_rf']:.3f}", f"{times['fermion']:.3f}",
                     f"{times['parquet']:.3f}", f"{times['parquet'] / times['fermion_rf']:.2f}x",
                     f"{times['parquet'] / times['fermion']:.2f}x", f"{times['fermion'] / times['fermion_rf']:.2f}x"])
    # Partitioned by month: both formats prune partitions at run time; Fermion's option does not apply.
    part_rows = []
    for label, q in [
        ("partitioned by month: one year (10 %)", "SELECT m.month, sum(s.amount), count(*) FROM sales_by_month_{f} s "
         "JOIN months_{f} m ON s.month_key = m.month_key WHERE m.year = 2020 GROUP BY m.month"),
        ("partitioned by month: one month (0.8 %)", "SELECT s.day_key, sum(s.amount * s.quantity) FROM sales_by_month_{f} s "
         "JOIN months_{f} m ON s.month_key = m.month_key WHERE m.year = 2022 AND m.month = 7 GROUP BY s.day_key"),
    ]:
        pruned, times = measure(spark, label, {f: q.format(f=f) for f in ("fermion", "parquet")}, args.reps, "fermion")
        part_rows.append([label, "yes" if pruned else "no", f"{times['fermion']:.3f}", f"{times['parquet']:.3f}",
                          f"{times['parquet'] / times['fermion']:.2f}x"])
    text = [f"# Star joins with runtime filters\n\n{n:,} sales rows in 4 files sorted by `day_key` ({per_day:,} rows a day, "
            f"{DAYS} days), joined with a {DAYS}-row date dimension filtered as each query says, and a 500-row store "
            f"dimension on the unsorted `store_key`; {machine_line()}; median of {args.reps} runs after a warm-up, "
            "Fermion with `runtimeFilters` on, off, and Parquet (zstd, not partitioned) interleaved; answers equal. "
            "`runtime filter` says whether Spark planned dynamic pruning into the Fermion scan (offered only on "
            "columns whose stripes hold narrow slices of their values). Speedup = Parquet's time / Fermion's.\n",
            markdown_table(["query", "runtime filter", "Fermion + runtimeFilters s", "Fermion s", "Parquet s",
                            "vs Parquet", "vs Parquet (option off)", "option on vs off"], rows),
            "\n\n## The same sales partitioned by month (`partitionBy(\"month_key\")`, 120 partitions, both formats)\n\n"
            "Joined on the partition column with a 120-row month dimension: Spark prunes partitions by the join's keys "
            "in both formats (Fermion offers its partition columns to dynamic pruning whatever `runtimeFilters` says).\n",
            markdown_table(["query", "runtime filter", "Fermion s", "Parquet s", "vs Parquet"], part_rows), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
