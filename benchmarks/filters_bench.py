"""Selective filters (issue 5, W4): point lookups and ranges of 0.1 %, 1 % and 10 % on a sorted
key, and a point lookup on an unsorted key, Fermion vs Parquet (zstd) vs ORC (zstd), with the
bytes Fermion reads (its scan metric) against the selectivity.

    benchmarks/run.sh filters [--rows N]

Writes benchmarks/results/filters.md.
"""
import argparse
import os
import tempfile

from harness import (FORMATS, machine_line, markdown_table, noop_scan, progress, publish, scan_metrics, session,
                     size_of, timed, write_all)


def fermion_metrics(df):
    return scan_metrics(df, ("fermionBytesRead", "fermionMetadataBytesRead", "stripesRead", "stripesSkipped",
                             "pagesSkipped"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "filters.md"))
    args = ap.parse_args()
    spark = session("fermion-filters-bench")
    base = tempfile.mkdtemp(prefix="fermion-filters-bench-")
    n = args.rows
    progress(f"generating {n:,} rows")
    df = spark.range(n, numPartitions=4).selectExpr(
        "id as k", "cast(rand(1) * 9.2e18 as bigint) as u", "rand(2) * 1000 as x", "uuid(3) as payload")
    paths = write_all(spark, df.coalesce(4), base, "filters", fermion_options={"bloomFilterColumns": "u"})
    # The same data with 4x larger stripes: how much the stripe size decides selective reads.
    large = os.path.join(base, "filters-large-stripes.fermion")
    df.coalesce(4).write.format("fermion").option("bloomFilterColumns", "u").option("stripeRows", "262144").save(large)
    # A one-row table: what any Spark query costs here, whatever the format (the floor of a lookup).
    tiny = os.path.join(base, "tiny.fermion")
    spark.range(1).selectExpr("id as k", "id as u", "0.5 as x", "'a' as payload").write.format("fermion").save(tiny)
    sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
    large_size = size_of(spark, large)
    probe = spark.read.parquet(paths["parquet"]).select("u").limit(1).collect()[0].u
    mid = n // 2
    queries = [
        ("sorted key, point lookup", f"k = {mid}", 1 / n),
        ("sorted key, 0.1 %", f"k >= {mid} and k < {mid + n // 1000}", 0.001),
        ("sorted key, 1 %", f"k >= {mid} and k < {mid + n // 100}", 0.01),
        ("sorted key, 10 %", f"k >= {mid} and k < {mid + n // 10}", 0.1),
        ("unsorted key, point lookup", f"u = {probe}", 1 / n),
    ]
    cols = ("k", "u", "x", "payload")

    def query(path, fmt, cond):
        return spark.read.format(fmt).load(path).where(cond).select(*cols)

    # Every query once per format before any timing (JIT, file-system caches).
    for _, cond, _ in queries:
        for f in FORMATS:
            noop_scan(query(paths[f], f, cond))
        noop_scan(query(large, "fermion", cond))
    floor, _ = timed(lambda: noop_scan(query(tiny, "fermion", "k = 0")), reps=args.reps)
    rows, large_rows = [], []
    for label, cond, selectivity in queries:
        times = {}
        counts = {f: query(paths[f], f, cond).count() for f in FORMATS}
        assert len(set(counts.values())) == 1, counts
        for f in FORMATS:
            times[f], _ = timed(lambda: noop_scan(query(paths[f], f, cond)), reps=args.reps)
        # Metrics come from the DataFrame's own plan, so this run collects (once, untimed).
        fdf = query(paths["fermion"], "fermion", cond)
        fdf.collect()
        m = fermion_metrics(fdf)
        data = m["fermionBytesRead"] - m["fermionMetadataBytesRead"]
        large_time, _ = timed(lambda: noop_scan(query(large, "fermion", cond)), reps=args.reps)
        ldf = query(large, "fermion", cond)
        ldf.collect()
        lm = fermion_metrics(ldf)
        large_rows.append([label, f"{large_time:.3f}", f"{times['parquet'] / large_time:.2f}x", f"{lm['fermionBytesRead']:,}",
                           f"{(lm['fermionBytesRead'] - lm['fermionMetadataBytesRead']) / large_size:.4f}",
                           f"{lm['stripesRead']}/{lm['stripesRead'] + lm['stripesSkipped']}"])
        progress(f"{label}: " + ", ".join(f"{f} {times[f]:.3f}s" for f in FORMATS) + f"; fermion read {data:,} data bytes")
        rows.append([label, f"{counts['fermion']:,}", *[f"{times[f]:.3f}" for f in FORMATS],
                     f"{times['parquet'] / times['fermion']:.2f}x", f"{times['orc'] / times['fermion']:.2f}x",
                     f"{data:,}", f"{m['fermionMetadataBytesRead']:,}", f"{data / sizes['fermion']:.4f}", f"{selectivity:.6f}",
                     f"{data / sizes['fermion'] / selectivity:.1f}x",
                     f"{m['stripesRead']}/{m['stripesRead'] + m['stripesSkipped']}", f"{m['pagesSkipped']:,}"])
    text = [f"# Selective filters\n\n{n:,} rows in 4 files (k sorted, u random, x double, payload uuid string); {machine_line()}; "
            f"median of {args.reps} runs after a warm-up of every query; each run scans the matching rows of all four columns into "
            "Spark's `noop` sink (every value materialised, nothing shipped to Python). Speedup = other format's time / Fermion's. "
            "Fermion is written with `bloomFilterColumns=u` and its defaults (stripes of 65,536 rows, DATA pages of 8,192 rows); Parquet and ORC with Spark's defaults. "
            "`data bytes` are the bytes Fermion read from data areas (pages, bloom filters), `metadata bytes` the footers, CIT and CMBs of the 4 files "
            f"(64 KiB tail read each); `share` = data bytes / file size; `vs selectivity` = share / selectivity (target for the sorted key: at most 2x).\n\n"
            f"A query on a one-row Fermion table takes {floor:.3f} s here: Spark's fixed cost per query, the floor of every lookup below.\n",
            markdown_table(["query", "rows", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC", "data bytes",
                            "metadata bytes", "share", "selectivity", "vs selectivity", "stripes read", "pages skipped"], rows),
            "\n\n## Fermion with 262,144-row stripes (`stripeRows=262144`; the default is 65,536)\n",
            markdown_table(["query", "Fermion s", "vs Parquet", "bytes read", "data share", "stripes read"], large_rows),
            "\n\n" + markdown_table(["format", "bytes"], [[f, f"{sizes[f]:,}"] for f in FORMATS] +
                                    [["fermion, 262,144-row stripes", f"{large_size:,}"]]), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
