"""Selective filters (issue 5, W4): point lookups and ranges of 0.1 %, 1 % and 10 % on a sorted
key, and a point lookup on an unsorted key, Fermion vs Parquet (zstd) vs ORC (zstd), with the
bytes Fermion reads (its scan metric) against the selectivity.

    benchmarks/run.sh filters [--rows N]

Writes benchmarks/results/filters.md.
"""
import argparse
import os
import tempfile

from harness import FORMATS, machine_line, markdown_table, progress, publish, session, size_of, timed, write_all


def fermion_bytes(df):
    scan = df._jdf.queryExecution().executedPlan().collectLeaves().head()
    m = scan.metrics()
    return m.apply("fermionBytesRead").value(), m.apply("stripesRead").value(), m.apply("stripesSkipped").value()


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
    small = os.path.join(base, "filters-large-stripes.fermion")
    df.coalesce(4).write.format("fermion").option("bloomFilterColumns", "u").option("stripeRows", "262144").save(small)
    sizes = {f: size_of(spark, paths[f]) for f in FORMATS}
    small_size = size_of(spark, small)
    probe = spark.read.parquet(paths["parquet"]).select("u").limit(1).collect()[0].u
    mid = n // 2
    queries = [
        ("sorted key, point lookup", f"k = {mid}", 1 / n),
        ("sorted key, 0.1 %", f"k >= {mid} and k < {mid + n // 1000}", 0.001),
        ("sorted key, 1 %", f"k >= {mid} and k < {mid + n // 100}", 0.01),
        ("sorted key, 10 %", f"k >= {mid} and k < {mid + n // 10}", 0.1),
        ("unsorted key, point lookup", f"u = {probe}", 1 / n),
    ]
    rows, small_rows = [], []
    for label, cond, selectivity in queries:
        times, counts = {}, {}
        for f in FORMATS:
            q = lambda: spark.read.format(f).load(paths[f]).where(cond).select("k", "u", "x", "payload").collect()
            times[f], result = timed(q, reps=args.reps)
            counts[f] = len(result)
        assert len(set(counts.values())) == 1, counts
        fdf = spark.read.format("fermion").load(paths["fermion"]).where(cond).select("k", "u", "x", "payload")
        fdf.collect()
        read, stripes_read, skipped = fermion_bytes(fdf)
        small_time, _ = timed(lambda: spark.read.format("fermion").load(small).where(cond).select("k", "u", "x", "payload").collect(), reps=args.reps)
        sdf = spark.read.format("fermion").load(small).where(cond).select("k", "u", "x", "payload")
        sdf.collect()
        small_read, small_stripes, small_skipped = fermion_bytes(sdf)
        small_rows.append([label, f"{small_time:.3f}", f"{times['parquet'] / small_time:.2f}x", f"{small_read:,}",
                           f"{small_read / small_size:.4f}", f"{small_stripes}/{small_stripes + small_skipped}"])
        progress(f"{label}: " + ", ".join(f"{f} {times[f]:.3f}s" for f in FORMATS) + f"; fermion read {read:,} bytes")
        rows.append([label, f"{counts['fermion']:,}", *[f"{times[f]:.3f}" for f in FORMATS],
                     f"{times['parquet'] / times['fermion']:.2f}x", f"{times['orc'] / times['fermion']:.2f}x",
                     f"{read:,}", f"{read / sizes['fermion']:.4f}", f"{selectivity:.6f}", f"{stripes_read}/{stripes_read + skipped}"])
    text = [f"# Selective filters\n\n{n:,} rows (k sorted, u random, x double, payload uuid string); {machine_line()}; "
            f"median of {args.reps} runs after 1 warm-up, each collecting the matching rows; speedup = other format's time / Fermion's. "
            "Fermion is written with `bloomFilterColumns=u` (Parquet and ORC with Spark's defaults). `bytes read` is Fermion's scan metric (data and metadata reads); `share` = bytes read / file size.\n",
            markdown_table(["query", "rows", "Fermion s", "Parquet s", "ORC s", "vs Parquet", "vs ORC", "Fermion bytes read",
                            "share of file", "selectivity", "stripes read"], rows),
            "\n\n## Fermion with 262,144-row stripes (`stripeRows=262144`; the default is 65,536)\n",
            markdown_table(["query", "Fermion s", "vs Parquet", "bytes read", "share of file", "stripes read"], small_rows),
            "\n\n" + markdown_table(["format", "bytes"], [[f, f"{sizes[f]:,}"] for f in FORMATS] +
                                    [["fermion, 262,144-row stripes", f"{small_size:,}"]]), "\n"]
    publish(spark, args.out, text)


if __name__ == "__main__":
    main()
