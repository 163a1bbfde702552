"""Analytical queries on the TPC-H-like lineitem (issue 15): TPC-H Q6 (a date range, a BETWEEN on
a decimal and a comparison, then a sum of products; few rows match) and Q1 (nearly every row,
grouped), over Fermion, Parquet and ORC written from the same DataFrame, formats interleaved.

    benchmarks/run.sh analytic [--rows N] [--reps N]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from encodings_bench import Q1, lineitem  # noqa: E402
from harness import FORMATS, machine_line, markdown_table, progress, publish, session, timed_side_by_side, write_all  # noqa: E402

Q6 = """select sum(l_extendedprice * l_discount) as revenue from {t}
        where l_shipdate >= date'1994-01-01' and l_shipdate < date'1995-01-01'
        and l_discount between 0.05 and 0.07 and l_quantity < 24"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=6_000_000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "analytic"))
    args = ap.parse_args()
    spark = session("fermion-analytic-bench")
    base = os.path.join(args.data, f"rows-{args.rows}")
    progress(f"lineitem: {args.rows:,} rows")
    paths = write_all(spark, lineitem(spark, args.rows), base, "lineitem", reuse=True)
    for f, p in paths.items():
        spark.read.format(f).load(p).createOrReplaceTempView(f"lineitem_{f}")
    rows = []
    for name, q in (("Q6", Q6), ("Q1", Q1)):
        answers = {f: sorted(map(tuple, spark.sql(q.format(t=f"lineitem_{f}")).collect())) for f in FORMATS}
        assert all(a == answers["parquet"] for a in answers.values()), f"{name}: formats disagree: {answers}"
        times = timed_side_by_side({f: (lambda f=f: spark.sql(q.format(t=f"lineitem_{f}")).collect()) for f in FORMATS},
                                   reps=args.reps)
        progress(f"{name}: " + ", ".join(f"{f} {times[f]:.3f}s" for f in FORMATS))
        rows.append([name, *[f"{times[f]:.3f}" for f in FORMATS],
                     f"{times['parquet'] / times['fermion']:.2f}x", f"{times['orc'] / times['fermion']:.2f}x"])
    header = ["query", *[f"{f} s" for f in FORMATS], "vs Parquet", "vs ORC"]
    publish(spark, os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "analytic.md"), [
        "# Analytical queries on lineitem\n",
        f"{machine_line()}; the TPC-H-like lineitem of `encodings_bench.py` ({args.rows:,} rows, sorted by "
        "`l_orderkey`, other columns random), each format with its defaults (Parquet and ORC zstd); median of "
        f"{args.reps} runs after a warm-up, formats interleaved; every format's answer checked equal. "
        "Speedup = other format's time / Fermion's.\n",
        markdown_table(header, rows), ""])


if __name__ == "__main__":
    main()
