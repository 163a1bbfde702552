"""Wide tables (issue W1): a table of N double columns (1,000 / 10,000 / ...) written as Fermion,
Parquet (zstd) and ORC (zstd); each query reads 10 of the columns. The point of Fermion's
per-column metadata: cost should follow the columns read, not the columns stored.

    benchmarks/run.sh wide [--columns 1000,10000] [--files 4,24] [--rows 20000]

Each column count is written in each file count (the 24-file shape spreads the same rows thinner:
more files to open, more footers for Parquet and ORC to read).

Writes benchmarks/results/wide.md.
"""
import argparse
import os
import statistics
import tempfile

from harness import (publish, FORMATS, machine_line, markdown_table, paired_ratio_quartiles, progress, session, size_of,
                     timed_runs, write_all)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--columns", default="1000,10000")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--files", default="4,24")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "wide.md"))
    args = ap.parse_args()
    # Generated code for 10,000-column rows exhausts janino (OOM); interpreted projections are the
    # same for every format.
    spark = session("fermion-wide-bench", extra={"spark.sql.codegen.factoryMode": "NO_CODEGEN",
                                                 "spark.sql.debug.maxToStringFields": "20"})
    base = tempfile.mkdtemp(prefix="fermion-wide-bench-")
    rows = []
    shapes = [(int(c), int(f)) for c in args.columns.split(",") for f in args.files.split(",")]
    for ncols, files in shapes:
        progress(f"generating {args.rows:,} rows x {ncols:,} double columns in {files} files")
        df = spark.range(args.rows, numPartitions=files).selectExpr(
            "id", *[f"cast(id * {i + 1} % 1000 as double) / 7 as c{i}" for i in range(ncols)])
        paths = write_all(spark, df, base, f"wide{ncols}x{files}")
        picked = [f"c{i}" for i in range(0, ncols, max(1, ncols // 10))][:10]
        # The same 10 columns stored alone, in as many files: what the query costs when nothing else
        # is stored.
        narrow = os.path.join(base, f"narrow{ncols}x{files}.fermion")
        df.select(*picked).write.format("fermion").save(narrow)

        def query(fmt, path):
            return spark.read.format(fmt).load(path).select(*picked).selectExpr(*[f"sum({c})" for c in picked])
        results = {}

        def run(name, fmt, path):
            def go():
                results.setdefault(name, set()).add(tuple(round(x, 3) for x in query(fmt, path).collect()[0]))
            return go
        runs = {f: run(f, f, paths[f]) for f in FORMATS}
        runs["narrow"] = run("narrow", "fermion", narrow)
        # Formats interleaved, order reversed every other rep (harness.timed_runs): the JIT is still
        # compiling Spark's analysis of the wide plan after dozens of queries, so a format timed alone
        # right after another would inherit its warm-up.
        times = timed_runs(runs, warmups=3, reps=args.reps)
        assert len(set().union(*results.values())) == 1, results
        median = {k: statistics.median(v) for k, v in times.items()}
        low, high = paired_ratio_quartiles(times["parquet"], times["fermion"])
        # Metrics from a plan whose leaf is the scan (the aggregate's exchange hides it under AQE).
        q = spark.read.format("fermion").load(paths["fermion"]).select(*picked)
        q.collect()
        scan = q._jdf.queryExecution().executedPlan().collectLeaves().head()
        meta = scan.metrics().apply("fermionMetadataBytesRead").value()
        progress(f"{ncols} columns in {files} files: " + ", ".join(f"{f} {median[f]:.3f}s" for f in FORMATS)
                 + f"; 10 columns alone {median['narrow']:.3f}s")
        sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
        rows.append([f"{ncols:,}", f"{files} files", *[f"{median[f]:.3f}" for f in FORMATS],
                     f"{median['parquet'] / median['fermion']:.2f}x", f"{low:.2f}-{high:.2f}x",
                     f"{median['orc'] / median['fermion']:.2f}x",
                     f"{median['narrow']:.3f}", f"{meta / files:,.0f}",
                     *[f"{sizes[f] / 1e6:.1f}" for f in FORMATS]])
    text = [f"# Wide tables: read 10 columns\n\n{args.rows:,} rows per table, in as many files as the row says; {machine_line()}; "
            f"formats interleaved, the order reversed every other run, median of {args.reps} runs after 3 warm-ups; "
            "`vs Parquet, middle half` is the first to third quartile of Parquet's time / Fermion's within each run; "
            "each run plans and executes `select 10 columns -> sum` from scratch "
            "(schema from the dataset or file footers, analysis of the wide schema, file open, metadata, data). "
            "`10 columns alone` is the same query on a Fermion table that stores only those 10 columns, in as many files: the cost of the query itself, "
            "which the wide table adds to only through Spark's handling of the wide schema. "
            "`metadata bytes / file` is what Fermion read of metadata per file: the files are format 1.5 and each task opens its file for the 10 columns through the column directory (footer, directory trailer and entries, the 10 schema nodes and CMBs), not the whole schema and CIT.\n",
            markdown_table(["stored columns", "files", "Fermion s", "Parquet s", "ORC s", "vs Parquet",
                            "vs Parquet, middle half", "vs ORC",
                            "10 columns alone s", "metadata bytes / file", "Fermion MB", "Parquet MB", "ORC MB"], rows), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
