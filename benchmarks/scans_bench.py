"""Single-column scans (issue W2): int, bigint, double, string, 50 % nulls, repeated strings, read
one column at a time through Spark's noop sink, Fermion vs Parquet (zstd) vs ORC (zstd).

    benchmarks/run.sh scans [--rows N]

Writes benchmarks/results/scans.md.
"""
import argparse
import os
import tempfile

from harness import publish, FORMATS, machine_line, markdown_table, noop_scan, progress, session, size_of, timed, timed_side_by_side, write_all

COLUMNS = {
    "int": "cast(rand(1) * 2147483647 as int)",
    "bigint": "cast(rand(2) * 9.2e18 as bigint)",
    "double": "rand(3) * 1e6",
    "string": "uuid(4)",
    "bigint, 50% nulls": "if(rand(5) < 0.5, null, cast(rand(6) * 1e12 as bigint))",
    "repeated strings": "element_at(array('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'), cast(rand(7) * 8 as int) + 1)",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "scans.md"))
    args = ap.parse_args()
    spark = session("fermion-scans-bench")
    base = tempfile.mkdtemp(prefix="fermion-scans-bench-")
    names = {label: f"c{i}" for i, label in enumerate(COLUMNS)}
    progress(f"generating {args.rows:,} rows")
    df = spark.range(args.rows, numPartitions=4).selectExpr(*[f"{e} as {names[label]}" for label, e in COLUMNS.items()])
    paths = write_all(spark, df, base, "scans")
    rows = []
    for label, col in names.items():
        times = timed_side_by_side({fmt: (lambda fmt=fmt: noop_scan(spark.read.format(fmt).load(paths[fmt]).select(col))) for fmt in FORMATS})
        progress(f"{label}: " + ", ".join(f"{f} {times[f]:.3f}s" for f in FORMATS))
        rows.append([label, *[f"{times[f]:.3f}" for f in FORMATS],
                     f"{times['parquet'] / times['fermion']:.2f}x", f"{times['orc'] / times['fermion']:.2f}x"])
    sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
    text = [f"# Single-column scans\n\n{args.rows:,} rows; {machine_line()}; median of 5 runs after 1 warm-up, formats interleaved run by run; "
            "each run materialises one column through the noop sink; speedup = other format's time / Fermion's.\n",
            markdown_table(["column", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC"], rows),
            "\n\n" + markdown_table(["format", "bytes (all 6 columns)", "vs Fermion"],
                                    [[f, f"{sizes[f]:,}", f"{sizes[f] / sizes['fermion']:.2f}"] for f in FORMATS]), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
