"""Nested-type scans: Fermion vs Parquet (zstd) vs ORC (zstd) on the same data, in one run.

Workloads: list<list<bigint>>, list<struct<a: bigint, b: double>>, map<string, double> feature
maps, one leaf of a struct, and an offsets-only query (size(col)). Full scans materialise every
value through Spark's noop sink. Writes benchmarks/results/nested.md.

    benchmarks/run.sh nested [--rows N]
"""
import argparse
import os
import tempfile

from harness import publish, FORMATS, machine_line, markdown_table, noop_scan, progress, session, size_of, timed_side_by_side, write_all

REPS = 7


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "nested.md"))
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    spark = session("fermion-nested-bench")
    base = args.workdir or tempfile.mkdtemp(prefix="fermion-nested-bench-")
    progress(f"generating {args.rows:,} rows in {base}")
    df = spark.range(args.rows, numPartitions=4).selectExpr(
        "id",
        "transform(sequence(0, id % 4), i -> sequence(id, id + i % 3)) as ll",
        "transform(sequence(0, id % 6), i -> named_struct('a', id * i, 'b', cast(i as double) / 3)) as ls",
        "map_from_arrays(transform(sequence(0, id % 5), i -> concat('f', cast((id + i) % 100 as string))), "
        "transform(sequence(0, id % 5), i -> cast((id * 31 + i * 7) % 1000 as double) / 7)) as feats",
        "named_struct('x', id % 1000, 'y', concat('name-', cast(id % 50000 as string)), 'z', cast(id as double) * 1.5) as s",
        # The same list values as a top-level column and inside a struct (issue 15: structs of
        # lists as fast as flat columns of the same values).
        "sequence(id, id + id % 7) as fl",
        "named_struct('k', id % 10, 'l', sequence(id, id + id % 7)) as sl")
    paths = write_all(spark, df, base, "nested")

    workloads = [
        ("list<list<bigint>> full scan", lambda t: noop_scan(t.select("ll"))),
        ("list<struct<a,b>> full scan", lambda t: noop_scan(t.select("ls"))),
        ("map<string,double> full scan", lambda t: noop_scan(t.select("feats"))),
        ("struct leaf s.x", lambda t: noop_scan(t.select("s.x"))),
        ("size(ll) offsets only", lambda t: t.selectExpr("sum(size(ll))").collect()[0][0]),
        ("list<bigint> full scan", lambda t: noop_scan(t.select("fl"))),
        ("the same list<bigint> in a struct, sl.l", lambda t: noop_scan(t.select("sl.l"))),
    ]
    rows = []
    fermion = {}
    for name, q in workloads:
        results = {}

        def run(fmt, q=q):
            results[fmt] = q(spark.read.format(fmt).load(paths[fmt]))
        # Formats interleaved run by run: this machine's speed drifts more than the differences measured.
        times = timed_side_by_side({fmt: (lambda fmt=fmt: run(fmt)) for fmt in FORMATS}, warmups=2, reps=REPS)
        assert len({repr(r) for r in results.values()}) == 1, (name, results)
        progress(f"{name}: " + ", ".join(f"{f} {times[f]:.3f}s" for f in FORMATS))
        fermion[name] = times["fermion"]
        rows.append([name] + [f"{times[f]:.3f}" for f in FORMATS] +
                    [f"{times['parquet'] / times['fermion']:.2f}x", f"{times['orc'] / times['fermion']:.2f}x"])
    # Spark's own cost of the size() query, whatever the format: the same query over one row.
    one = write_all(spark, spark.read.format("parquet").load(paths["parquet"]).limit(1), base, "one_row")
    fixed = timed_side_by_side(
        {fmt: (lambda fmt=fmt: spark.read.format(fmt).load(one[fmt]).selectExpr("sum(size(ll))").collect())
         for fmt in FORMATS}, warmups=2, reps=REPS)
    progress("size(ll) over one row: " + ", ".join(f"{f} {fixed[f]:.3f}s" for f in FORMATS))
    size_name = "size(ll) offsets only"
    size_times = {f: float(r) for f, r in zip(FORMATS, next(r for r in rows if r[0] == size_name)[1:4])}
    beyond = {f: max(1e-3, size_times[f] - fixed[f]) for f in FORMATS}
    sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
    text = [f"# Nested scans\n\n{args.rows:,} rows; {machine_line()}; formats interleaved, median of {REPS} runs after 2 warm-ups; "
            "seconds (lower is better); speedup = other format's time / Fermion's.\n",
            markdown_table(["workload", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC"], rows),
            f"\n\nFermion reads the list inside a struct in "
            f"{fermion['the same list<bigint> in a struct, sl.l'] / fermion['list<bigint> full scan']:.2f}x the time of "
            "the same values stored as a top-level column.",
            f"\n\nThe same `sum(size(ll))` over a one-row table takes {fixed['fermion']:.3f} s with Fermion and "
            f"{fixed['parquet']:.3f} s with Parquet: Spark's own cost of the query (planning, code generation, "
            f"scheduling, the result), which bounds the ratio above; beyond it, reading the lengths of "
            f"{args.rows:,} rows takes {beyond['fermion']:.3f} s with Fermion and {beyond['parquet']:.3f} s with "
            f"Parquet ({beyond['parquet'] / beyond['fermion']:.1f}x).",
            "\n\n" + markdown_table(["format", "bytes", "vs Fermion"], [[f, f"{sizes[f]:,}", f"{sizes[f] / sizes['fermion']:.2f}"] for f in FORMATS]),
            "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
