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
    ap.add_argument("--reps", type=int, default=7)
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
        # The same 10 columns stored alone: what the query costs when nothing else is stored.
        narrow = os.path.join(base, f"narrow{ncols}.fermion")
        spark.read.parquet(paths["parquet"]).select(*picked).write.format("fermion").save(narrow)

        def query(fmt, path):
            return spark.read.format(fmt).load(path).select(*picked).selectExpr(*[f"sum({c})" for c in picked])
        times = {}
        for fmt in FORMATS:
            t, result = timed(lambda: query(fmt, paths[fmt]).collect()[0], warmups=2, reps=args.reps)
            times[fmt] = (t, tuple(round(x, 3) for x in result))
        assert len({v[1] for v in times.values()}) == 1, times
        narrow_time, _ = timed(lambda: query("fermion", narrow).collect()[0], warmups=2, reps=args.reps)
        # Metrics from a plan whose leaf is the scan (the aggregate's exchange hides it under AQE).
        q = spark.read.format("fermion").load(paths["fermion"]).select(*picked)
        q.collect()
        scan = q._jdf.queryExecution().executedPlan().collectLeaves().head()
        meta = scan.metrics().apply("fermionMetadataBytesRead").value()
        progress(f"{ncols} columns: " + ", ".join(f"{f} {times[f][0]:.3f}s" for f in FORMATS) + f"; 10 columns alone {narrow_time:.3f}s")
        sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
        rows.append([f"{ncols:,}", *[f"{times[f][0]:.3f}" for f in FORMATS],
                     f"{times['parquet'][0] / times['fermion'][0]:.2f}x", f"{times['orc'][0] / times['fermion'][0]:.2f}x",
                     f"{narrow_time:.3f}", f"{meta / args.files:,.0f}",
                     *[f"{sizes[f] / 1e6:.1f}" for f in FORMATS]])
    text = [f"# Wide tables: read 10 columns\n\n{args.rows:,} rows in {args.files} files per table; {machine_line()}; "
            f"median of {args.reps} runs after 2 warm-ups; each run plans and executes `select 10 columns -> sum` from scratch "
            "(schema from the dataset or file footers, analysis of the wide schema, file open, metadata, data). "
            "`10 columns alone` is the same query on a Fermion table that stores only those 10 columns: the cost of the query itself, "
            "which the wide table adds to only through Spark's handling of the wide schema. "
            "`metadata bytes / file` is what Fermion read of metadata per file: the files are format 1.5 and each task opens its file for the 10 columns through the column directory (footer, directory trailer and entries, the 10 schema nodes and CMBs), not the whole schema and CIT.\n",
            markdown_table(["stored columns", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC",
                            "10 columns alone s", "metadata bytes / file", "Fermion MB", "Parquet MB", "ORC MB"], rows), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
