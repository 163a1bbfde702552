"""Wide tables (issue W1): a table of N double columns (1,000 / 10,000 / ...) written as Fermion,
Parquet (zstd) and ORC (zstd); each query reads 10 of the columns. The point of Fermion's
per-column metadata: cost should follow the columns read, not the columns stored.

    benchmarks/run.sh wide [--columns 1000,10000] [--rows 20000]

Writes benchmarks/results/wide.md.
"""
import argparse
import os
import tempfile

from harness import publish, FORMATS, machine_line, markdown_table, progress, session, size_of, timed, write_all


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--columns", default="1000,10000")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "wide.md"))
    args = ap.parse_args()
    # Generated code for 10,000-column rows exhausts janino (OOM); interpreted projections are the
    # same for every format.
    spark = session("fermion-wide-bench", extra={"spark.sql.codegen.factoryMode": "NO_CODEGEN",
                                                 "spark.sql.debug.maxToStringFields": "20"})
    base = tempfile.mkdtemp(prefix="fermion-wide-bench-")
    rows = []
    for ncols in [int(c) for c in args.columns.split(",")]:
        progress(f"generating {args.rows:,} rows x {ncols:,} double columns")
        df = spark.range(args.rows, numPartitions=args.files).selectExpr(
            "id", *[f"cast(id * {i + 1} % 1000 as double) / 7 as c{i}" for i in range(ncols)])
        paths = write_all(spark, df, base, f"wide{ncols}")
        picked = [f"c{i}" for i in range(0, ncols, max(1, ncols // 10))][:10]
        times = {}
        for fmt in FORMATS:
            t, result = timed(lambda: spark.read.format(fmt).load(paths[fmt]).select(*picked)
                              .selectExpr(*[f"sum({c})" for c in picked]).collect()[0], warmups=1, reps=5)
            times[fmt] = (t, tuple(round(x, 3) for x in result))
        assert len({v[1] for v in times.values()}) == 1, times
        progress(f"{ncols} columns: " + ", ".join(f"{f} {times[f][0]:.3f}s" for f in FORMATS))
        sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
        rows.append([f"{ncols:,}", *[f"{times[f][0]:.3f}" for f in FORMATS],
                     f"{times['parquet'][0] / times['fermion'][0]:.2f}x", f"{times['orc'][0] / times['fermion'][0]:.2f}x",
                     *[f"{sizes[f] / 1e6:.1f}" for f in FORMATS]])
    text = [f"# Wide tables: read 10 columns\n\n{args.rows:,} rows in {args.files} files per table; {machine_line()}; "
            "median of 5 runs after 1 warm-up; each run plans and executes `select 10 columns -> sum` from scratch "
            "(schema inference, file open, metadata, data).\n",
            markdown_table(["stored columns", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC",
                            "Fermion MB", "Parquet MB", "ORC MB"], rows), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
