"""TPC-H in Spark (issue 15): the 22 queries over Fermion and Parquet (zstd), both written by
Spark from the same DataFrames of tpchgen-cli's tables, runs interleaved, every answer checked
equal across the formats. The same queries over Spark's in-memory cache of the tables (no file to
read, nothing to decode) show how much of each query's time reading files accounts for at all
(--no-bound skips them).

    benchmarks/run.sh tpch [--scale 1] [--reps 5] [--queries 1,6]
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import machine_line, markdown_table, paired_ratio_quartiles, progress, publish, session, size_of, timed_runs, write_all  # noqa: E402
from tpch_queries import QUERIES, TABLES  # noqa: E402

FORMATS = ("fermion", "parquet")
TABLE_NAME = re.compile(r"\b(" + "|".join(TABLES) + r")\b")


def generate(scale, src):
    """tpchgen-cli's Parquet tables (dbgen's data, rows in dbgen order) under `src`."""
    if all(os.path.exists(os.path.join(src, f"{t}.parquet")) for t in TABLES):
        return
    progress(f"generating TPC-H sf{scale:g} with tpchgen-cli")
    tool = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    subprocess.run([tool, "parquet", "-s", f"{scale:g}", "-o", src], check=True)


def query_for(fmt, q):
    return TABLE_NAME.sub(lambda m: f"{m.group(1)}_{fmt}", q)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--queries", default=",".join(map(str, QUERIES)))
    ap.add_argument("--no-bound", action="store_true", help="skip the run over Spark's in-memory cache")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tpch"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "tpch.md"))
    args = ap.parse_args()
    base = os.path.join(args.data, f"sf{args.scale:g}")
    generate(args.scale, os.path.join(base, "source"))
    # The cache stores plain values (no compression to undo): the cheapest scan Spark has.
    spark = session("fermion-tpch-bench", extra={"spark.sql.inMemoryColumnarStorage.compressed": "false"})
    sizes = []
    for t in TABLES:
        paths = write_all(spark, spark.read.parquet(os.path.join(base, "source", f"{t}.parquet")), base, t,
                          formats=FORMATS, reuse=True)
        for f, p in paths.items():
            spark.read.format(f).load(p).createOrReplaceTempView(f"{t}_{f}")
        if not args.no_bound:
            # The same rows in Spark's in-memory columnar cache: no file, no decoding. Cached from the
            # generator's files, not from the Parquet copy timed: Spark's cache manager serves every
            # query whose plan matches a cached one from the cache, so caching `paths["parquet"]`
            # would time the Parquet queries over the cache too (as this benchmark did until
            # 2026-12-06); the plans are checked below.
            spark.read.parquet(os.path.join(base, "source", f"{t}.parquet")).cache().createOrReplaceTempView(
                f"{t}_memory")
            spark.table(f"{t}_memory").count()
        sizes.append([t, *[f"{size_of(spark, paths[f]) / 1e6:.1f}" for f in FORMATS],
                      f"{size_of(spark, paths['fermion']) / size_of(spark, paths['parquet']):.3f}"])
    variants = FORMATS if args.no_bound else FORMATS + ("memory",)
    rows, speedups, bounds, quartiles = [], [], [], []
    wanted = [int(q) for q in args.queries.split(",")]
    # A first pass over every query checks the answers and warms the JIT up for all of them: the
    # first queries timed would otherwise pay for compiling paths the later ones find compiled.
    answers = {}
    for n in wanted:
        got = {f: [tuple(r) for r in spark.sql(query_for(f, QUERIES[n])).collect()] for f in variants}
        for f in variants:
            if got[f] != got["parquet"]:
                raise AssertionError(f"Q{n}: {f} and Parquet answers differ: {got[f][:5]} vs {got['parquet'][:5]}")
        answers[n] = got
        for f in variants:
            cached = "InMemoryTableScan" in spark.sql(query_for(f, QUERIES[n]))._jdf.queryExecution().executedPlan().toString()
            if cached != (f == "memory"):
                raise AssertionError(f"Q{n}: the {f} query {'reads' if cached else 'does not read'} Spark's cache")
        progress(f"Q{n}: {len(got['parquet'])} rows, answers equal")
    for n in wanted:
        texts = {f: query_for(f, QUERIES[n]) for f in variants}
        runs = timed_runs({f: (lambda f=f: spark.sql(texts[f]).collect()) for f in variants},
                          warmups=1, reps=args.reps)
        times = {f: statistics.median(v) for f, v in runs.items()}
        speedup = times["parquet"] / times["fermion"]
        speedups.append(speedup)
        low, high = paired_ratio_quartiles(runs["parquet"], runs["fermion"])
        quartiles.append((low, high))
        row = [f"Q{n}", f"{times['fermion']:.3f}", f"{times['parquet']:.3f}", f"{speedup:.2f}x",
               f"{low:.2f}-{high:.2f}x"]
        if "memory" in times:
            bounds.append(times["parquet"] / times["memory"])
            row += [f"{times['memory']:.3f}", f"{bounds[-1]:.2f}x"]
        rows.append(row + [len(answers[n]["fermion"])])
        progress(f"Q{n}: " + ", ".join(f"{f} {times[f]:.3f} s" for f in variants) + f", {speedup:.2f}x")

    def geomean(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs))
    slower = [r[0] for r, s in zip(rows, speedups) if s < 1.0]
    # Slower in at least three quarters of the paired runs, not only in their median.
    clearly_slower = [r[0] for r, q in zip(rows, quartiles) if q[1] < 1.0]
    header = ["query", "Fermion s", "Parquet s", "speedup", "middle half of paired speedups"]
    if bounds:
        header += ["in-memory s", "in-memory vs Parquet"]
    bound_text = ("" if not bounds else
                  f" The same queries over Spark's in-memory columnar cache of the tables (`.cache()` without "
                  f"compression, filled before timing: no file, no decoding; its plans can differ, since the "
                  f"cache reports its real size) run at **{geomean(bounds):.2f}x** Parquet's speed (geometric "
                  f"mean): what Spark's joins, aggregations, shuffles and row handling cost with no file to "
                  f"read and nothing to decode.")
    publish(spark, args.out, [
        "# TPC-H in Spark: Fermion vs Parquet\n",
        f"{machine_line()}; TPC-H sf{args.scale:g} from tpchgen-cli, each table read from its Parquet output and "
        "written by Spark as Fermion (defaults) and as Parquet (zstd) from the same DataFrame; the 22 queries of "
        "the specification with its validation parameters (`benchmarks/tpch_queries.py`); median of "
        f"{args.reps} runs after a first pass over all queries and a warm-up, formats interleaved (their order reversed "
        "every other run); every answer checked equal to Parquet's. "
        "Speedup = Parquet's time / Fermion's medians. The middle half of paired speedups is the first to third "
        "quartile of Parquet's time / Fermion's within each run (the two run next to each other, so the machine's "
        "drift between runs cancels): where that ratio lay in half of the runs. A range that spans 1.00x means "
        "the two formats could not be told apart on this machine for that query.\n",
        markdown_table(header + ["rows"], rows),
        "",
        f"Geometric mean of the speedups over {len(speedups)} queries: **{geomean(speedups):.2f}x**; "
        f"slower than Parquet: {', '.join(slower) if slower else 'none'} (in three quarters of the paired runs: "
        f"{', '.join(clearly_slower) if clearly_slower else 'none'}).{bound_text}\n",
        "Table sizes (MB):\n",
        markdown_table(["table", "Fermion MB", "Parquet MB", "Fermion / Parquet"], sizes),
        ""])


if __name__ == "__main__":
    main()
