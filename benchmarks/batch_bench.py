"""Batch mode: rows in batches of 1-64 (a 128-float vector and a string per row), written as
Fermion with a batch key, as Fermion without one and as Parquet (zstd); then 1, 100 and 1,000
random batches fetched by key through Spark (`key IN (...)`), formats interleaved. Reports times,
the pages Fermion decoded against columns x batches, and the file sizes (batch mode vs none)."""
import argparse
import os
import random
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import VECTOR_SQL, machine_line, mark_written, markdown_table, progress, publish, release_finished_queries, reusable, scan_metrics, session, size_of  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000, help="about this many rows")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "batch"))
    args = ap.parse_args()
    spark = session("fermion-batch-bench")
    batches = args.rows // 32  # sizes 1..64, 32.5 on average
    base = os.path.join(args.data, f"rows-{args.rows}")
    paths = {k: os.path.join(base, k) for k in ("batched", "plain", "parquet")}
    df = spark.range(0, batches, 1, 16).selectExpr(
        "id as sample", "explode(sequence(0, cast(pmod(hash(id), 64) as int))) as idx") \
        .selectExpr("sample", "substr(sha2(concat(cast(sample as string), '-', cast(idx as string)), 256), 1, 20) as s",
                    VECTOR_SQL)
    if not all(reusable(p, fermion=k != "parquet") for k, p in paths.items()):
        for p in paths.values():  # an overwrite would keep the old version's files: sizes must be one copy's
            shutil.rmtree(p, ignore_errors=True)
        for name, writer in (
                ("batched", lambda: df.write.mode("overwrite").format("fermion").option("batchKey", "sample")),
                ("plain", lambda: df.write.mode("overwrite").format("fermion")),
                ("parquet", lambda: df.write.mode("overwrite").format("parquet"))):
            start = time.perf_counter()
            writer().save(paths[name])
            if name != "parquet":
                mark_written(paths[name])
            progress(f"wrote {name} in {time.perf_counter() - start:.0f} s")
    rows = spark.read.format("fermion").load(paths["plain"]).count()
    tables = {k: spark.read.format("parquet" if k == "parquet" else "fermion").load(p) for k, p in paths.items()}
    rnd = random.Random(11)
    out = []
    for k in (1, 100, 1000):
        times = {"batched": [], "plain": [], "parquet": []}
        engine = {"batched": [], "plain": [], "parquet": []}  # to Spark's noop sink: no rows to Python
        pages = []
        for rep in range(args.reps + 1):
            keys = sorted({rnd.randrange(batches) for _ in range(k)})
            in_list = ", ".join(map(str, keys))
            expected = None
            for name, t in tables.items():
                q = t.where(f"sample IN ({in_list})").select("sample", "s", "vec")
                q.collect()  # the same query once before: the pages it reads are in the OS page cache
                release_finished_queries()
                start = time.perf_counter()
                got = q.collect()
                if rep > 0:
                    times[name].append(time.perf_counter() - start)
                # The same query without bringing 32,000 rows of 128 floats into Python (~0.6 s for
                # any format at 1,000 batches): the engine's own time.
                q.write.format("noop").mode("overwrite").save()
                release_finished_queries()
                start = time.perf_counter()
                q.write.format("noop").mode("overwrite").save()
                if rep > 0:
                    engine[name].append(time.perf_counter() - start)
                ids = sorted((r.sample, r.s) for r in got)
                assert expected is None or ids == expected, name
                expected = ids
                if name == "batched" and rep > 0:
                    pages.append(scan_metrics(q, ("pagesDecoded",))["pagesDecoded"])
        med = {n: statistics.median(v) for n, v in times.items()}
        eng = {n: statistics.median(v) for n, v in engine.items()}
        # sample (key column), s and vec's list OFFSETS + elements: DATA pages per batch
        out.append([k, f"{med['batched']:.3f}", f"{med['plain']:.3f}", f"{med['parquet']:.3f}",
                    f"{med['parquet'] / med['batched']:.1f}x", f"{eng['batched']:.3f}", f"{eng['plain']:.3f}",
                    f"{eng['parquet']:.3f}", f"{eng['parquet'] / eng['batched']:.1f}x",
                    f"{statistics.median(pages):.0f}", k * 3])
        progress(f"{k} batches: " + ", ".join(f"{n} {t:.3f} s" for n, t in med.items()))
    sizes = {n: size_of(spark, p) for n, p in paths.items()}
    publish(spark, os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "batch.md"), [
        "# Batch mode: fetching batches by id", "",
        f"Machine: {machine_line()}. {rows:,} rows in {batches:,} batches of 1-64 rows (id, 20-character string, "
        f"128 x float32 vector). Spark `sample IN (k random ids)`; median of {args.reps} repetitions after a "
        "warm-up, formats interleaved, new ids each repetition; each query runs once untimed just before its "
        "timed run (the three copies do not fit in memory together: this keeps the page cache warm for every format).", "",
        "Each query is timed twice: `collect()` of its rows into Python, and written to Spark's `noop` sink "
        "(the engine's own time, without turning 128-float rows into Python objects).", "",
        markdown_table(["batches", "batch mode collect s", "no batch key collect s", "Parquet collect s",
                        "vs Parquet", "batch mode noop s", "no batch key noop s", "Parquet noop s", "vs Parquet (noop)",
                        "pages decoded", "columns x batches"], out), "",
        f"Sizes: batch mode {sizes['batched'] / 2**20:.0f} MiB, without batch key {sizes['plain'] / 2**20:.0f} MiB "
        f"({(sizes['batched'] / sizes['plain'] - 1) * 100:+.2f} %), Parquet {sizes['parquet'] / 2**20:.0f} MiB.", "",
    ])


if __name__ == "__main__":
    main()
