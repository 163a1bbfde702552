"""Random access (issue: take rows by position): the same random rows fetched from Fermion (the
core take, called in the JVM without a Spark job), Lance (pylance `take`) and Parquet (pyarrow,
reading the row groups that hold the rows), then through Spark: Fermion `_rowid IN (...)` against
Spark filtering Parquet on `id IN (...)` (Parquet written with default and with 8 KiB pages).

Tables: `main` (int64 id, a 20-character string, a 128-float vector) and `blobs` (int64 id and a
4 KiB binary). Rows are in id order in every format, so position p holds id p everywhere (checked).
Formats run interleaved, each repetition with fresh random rows, twice: with the OS page cache warm
for the rows read (each call repeated, the first untimed: CPU and request costs) and cold (the page
cache dropped before every call: disk reads; root only). At 10M rows the four copies of `main` do not
fit in memory together, so a "warm" run without the repeat would compare a cached file with an evicted one.
"""
import argparse
import os
import random
import statistics
import struct
import sys
import time

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import VECTOR_SQL, machine_line, mark_written, markdown_table, progress, publish, reusable, session, size_of  # noqa: E402


def generate(spark, base, name, rows, columns_sql, partitions, small_pages=None):
    """Writes the table in every format (each copy only if missing); `small_pages`: per-column Fermion
    options of a second Fermion copy, e.g. {"column.s.pageRows": "1024"}."""
    formats = ("fermion", "parquet", "parquet8k", "lance") + (("fermion_small",) if small_pages else ())
    paths = {f: os.path.join(base, f"{name}.{f}") for f in formats}
    df = spark.range(0, rows, 1, partitions).selectExpr(*columns_sql)

    def write(fmt, save):
        fermion = fmt.startswith("fermion")
        if reusable(paths[fmt], fermion):
            progress(f"reusing {name} as {fmt} ({rows} rows) in {base}")
            return
        start = time.perf_counter()
        save(paths[fmt])
        if fermion:
            mark_written(paths[fmt])
        progress(f"wrote {name} as {fmt} in {time.perf_counter() - start:.0f} s")

    fermion = df.write.mode("overwrite").format("fermion").option("stableRowIds", "true")
    write("fermion", fermion.save)
    if small_pages:
        write("fermion_small", fermion.options(**small_pages).save)
    write("parquet", df.write.mode("overwrite").parquet)
    write("parquet8k", df.write.mode("overwrite").option("parquet.page.size", "8192")
          .option("parquet.page.row.count.limit", "64").parquet)
    import lance

    def write_lance(path):
        files = sorted(os.path.join(paths["parquet"], f) for f in os.listdir(paths["parquet"]) if f.endswith(".parquet"))
        lance.write_dataset(pads.dataset(files).scanner(batch_size=8192).to_reader(), path, mode="overwrite")

    write("lance", write_lance)
    return paths


DROP_CACHES = "/proc/sys/vm/drop_caches"


def can_drop_cache():
    return os.access(DROP_CACHES, os.W_OK)


def drop_page_cache():
    """Empties the OS page cache (root only): the next read of every format comes from the disk."""
    os.sync()
    with open(DROP_CACHES, "w") as f:
        f.write("1\n")


class ParquetByRowGroup:
    """Reads the row groups that hold the rows (pyarrow), then picks the rows."""

    def __init__(self, path):
        self.files = [pq.ParquetFile(os.path.join(path, f)) for f in sorted(os.listdir(path)) if f.endswith(".parquet")]
        self.groups = []  # (file, group index, first row)
        first = 0
        for pf in self.files:
            for g in range(pf.metadata.num_row_groups):
                self.groups.append((pf, g, first))
                first += pf.metadata.row_group(g).num_rows
        self.starts = [g[2] for g in self.groups]

    def take(self, positions, columns):
        import bisect
        by_group = {}
        for i, p in enumerate(positions):
            by_group.setdefault(bisect.bisect_right(self.starts, p) - 1, []).append((i, p))
        out = [None] * len(positions)
        for g, items in by_group.items():
            pf, idx, first = self.groups[g]
            t = pf.read_row_group(idx, columns=columns)
            for i, p in items:
                out[i] = t.slice(p - first, 1)
        return pa.concat_tables(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--blob-rows", type=int, default=500_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--small-pages", action="store_true",
                    help="also a Fermion copy of main with s and vec in 1,024-value pages (an extra column)")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "take"))
    args = ap.parse_args()
    # TakeTimer (benchmarks/src, compiled by run.sh) times the core take inside the JVM.
    classes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "target", "scala-2.13", "classes")
    if not os.path.exists(os.path.join(classes, "io", "fermion", "benchmarks", "TakeTimer.class")):
        sys.exit(f"{classes} lacks TakeTimer: run this benchmark through benchmarks/run.sh take")
    spark = session("take-bench", extra={"spark.sql.files.maxRecordsPerFile": "0", "spark.driver.extraClassPath": classes})
    jvm = spark.sparkContext._jvm
    conf = spark._jsc.hadoopConfiguration()
    os.makedirs(args.data, exist_ok=True)
    tables = {
        "main": (generate(spark, args.data, f"main-{args.rows}", args.rows, [
            "id", "substr(sha2(cast(id as string), 256), 1, 20) as s",
            VECTOR_SQL], 16, small_pages={"column.s.pageRows": "1024", "column.vec.pageRows": "1024"} if args.small_pages else None), args.rows),
        "blobs": (generate(spark, args.data, f"blobs-{args.blob_rows}", args.blob_rows, [
            "id", "cast(repeat(substr(sha2(cast(id as string), 512), 1, 128), 32) as binary) as payload"], 8),
            args.blob_rows),
    }
    import lance
    scan_pkg = jvm.io.fermion.core.scan
    timer = jvm.io.fermion.benchmarks.TakeTimer
    allocator = jvm.org.apache.arrow.memory.RootAllocator()
    sc = spark.sparkContext

    def longs(values):
        return scan_pkg.Scan.keys(bytearray(struct.pack(f"<{len(values)}q", *values)))

    def strings(values):
        arr = sc._gateway.new_array(sc._jvm.String, len(values))
        for i, v in enumerate(values):
            arr[i] = v
        return arr

    rows_out = []
    bytes_out = []
    rnd = random.Random(7)
    caches = ("warm", "cold") if can_drop_cache() else ("warm",)
    for table, (paths, n) in tables.items():
        all_cols = ["id", "s", "vec"] if table == "main" else ["id", "payload"]
        one_col = ["vec"] if table == "main" else ["payload"]
        lance_ds = lance.dataset(paths["lance"])
        pq_reader = ParquetByRowGroup(paths["parquet"])
        snapshot = scan_pkg.Snapshot.open(paths["fermion"], conf)
        # The same table with `s` and `vec` in pages of 1,024 values instead of 8,192 (main only).
        small = scan_pkg.Snapshot.open(paths["fermion_small"], conf) if "fermion_small" in paths else None
        for cols in (all_cols, one_col):
            # One scan per column set, reused by every take (it keeps the files it opened).
            scan = snapshot.scanBuilder().select(strings(cols)).build()
            small_scan = small.scanBuilder().select(strings(cols)).build() if small else None
            for k in (10, 100, 1000):
                # The JIT compiles the take path during the first takes: warm it up outside the timing
                # (a take of 10 rows in a fresh JVM runs at about a third of its speed for the first
                # hundred takes; it settles after a few thousand, as in a long-running service).
                for _ in range(2000 if k <= 100 else 100):
                    for sc_ in (scan, small_scan) if small_scan else (scan,):
                        sc_.takePositions(longs([rnd.randrange(n) for _ in range(k)]), conf, allocator).close()
                for cache in caches:
                    times = {"fermion": [], "fermion_small": [], "lance": [], "parquet": [], "fermion_py": []}
                    fermion_bytes = {"fermion": [], "fermion_small": []}
                    for rep in range(args.reps + 1):
                        positions = [rnd.randrange(n) for _ in range(k)]
                        fns = {}

                        def rows_of(name, got, record=True):
                            """(rows, seconds the JVM measured or None)."""
                            if not name.startswith("fermion"):
                                return got, None
                            batch = got.batch()
                            try:
                                if record:
                                    fermion_bytes[name].append(batch.metrics().bytesRead())
                                return batch.numRows(), got.nanos() / 1e9
                            finally:
                                batch.close()

                        # Fermion's time is the JVM's clock around the take (TakeTimer); the clock here
                        # also counts the py4j calls (kept as "fermion_py").
                        fns["fermion"] = lambda: timer.takePositions(scan, longs(positions), conf, allocator)
                        if small_scan:
                            fns["fermion_small"] = lambda: timer.takePositions(small_scan, longs(positions), conf, allocator)
                        fns["lance"] = lambda: lance_ds.take(positions, columns=cols).num_rows
                        # Parquet reads whole row groups: at 100 rows it already reads every row group of main.
                        if k <= 100 or table == "blobs":
                            fns["parquet"] = lambda: pq_reader.take(positions, cols).num_rows
                        for name, fn in fns.items():
                            if cache == "warm":
                                rows_of(name, fn(), record=False)  # the same rows once before: pages cached
                            else:
                                drop_page_cache()
                            start = time.perf_counter()
                            got = fn()
                            elapsed = time.perf_counter() - start
                            got, jvm_elapsed = rows_of(name, got)
                            if rep > 0:  # the first repetition warms up
                                times[name].append(elapsed if jvm_elapsed is None else jvm_elapsed)
                                if name == "fermion":
                                    times["fermion_py"].append(elapsed)
                            assert got == k, (name, got, k)
                        if rep == 0 and k == 10:
                            ids = lance_ds.take(positions, columns=["id"]).column("id").to_pylist()
                            assert ids == positions, "position p holds id p in every format"
                    med = {f: statistics.median(v) for f, v in times.items() if v}
                    per_row = {f: statistics.median(v[1:]) / k for f, v in fermion_bytes.items() if v}
                    rows_out.append([table, "+".join(cols) if len(cols) < 3 else "all", k, cache,
                                     f"{med['fermion'] * 1000:.1f}", f"{med['fermion_py'] * 1000:.1f}",
                                     f"{med['fermion_small'] * 1000:.1f}" if "fermion_small" in med else "",
                                     f"{med['lance'] * 1000:.1f}",
                                     f"{med['parquet'] * 1000:.0f}" if "parquet" in med else "(not run)",
                                     f"{med['lance'] / med['fermion']:.2f}x",
                                     f"{med['lance'] / med['fermion_small']:.2f}x" if "fermion_small" in med else "",
                                     f"{med['parquet'] / med['fermion']:.0f}x" if "parquet" in med else "",
                                     f"{per_row['fermion'] / 1024:.1f}",
                                     f"{per_row['fermion_small'] / 1024:.1f}" if "fermion_small" in per_row else ""])
                    progress(f"{table} {cols} {k} rows, {cache}: " +
                             ", ".join(f"{f} {t * 1000:.1f} ms" for f, t in med.items()))
        bytes_out.append([table, n, *(f"{size_of(spark, paths[f]) / 2**20:.0f}" if f in paths else ""
                                      for f in ("fermion", "fermion_small", "parquet", "lance"))])

    # Through Spark: Fermion _rowid IN (...) vs Spark filtering Parquet on id IN (...).
    spark_rows = []
    for table, (paths, n) in tables.items():
        f = spark.read.format("fermion").load(paths["fermion"])
        p = spark.read.parquet(paths["parquet"])
        p8 = spark.read.parquet(paths["parquet8k"])
        for k in (10, 100, 1000):
            times = {"fermion": [], "parquet": [], "parquet8k": []}
            for rep in range(3 + 1):
                ids = sorted({rnd.randrange(n) for _ in range(k)})
                in_list = ", ".join(map(str, ids))
                qs = {"fermion": lambda: f.where(f"_rowid IN ({in_list})").collect(),
                      "parquet": lambda: p.where(f"id IN ({in_list})").collect(),
                      "parquet8k": lambda: p8.where(f"id IN ({in_list})").collect()}
                for name, q in qs.items():
                    q()  # the same query once before: the pages it reads are in the OS page cache
                    start = time.perf_counter()
                    got = len(q())
                    if rep > 0:
                        times[name].append(time.perf_counter() - start)
                    assert got == len(ids), (name, got)
            med = {k2: statistics.median(v) for k2, v in times.items()}
            spark_rows.append([table, k, f"{med['fermion']:.3f}", f"{med['parquet']:.3f}", f"{med['parquet8k']:.3f}",
                               f"{med['parquet'] / med['fermion']:.1f}x", f"{med['parquet8k'] / med['fermion']:.1f}x"])
            progress(f"spark {table} {k}: " + ", ".join(f"{x} {t:.3f} s" for x, t in med.items()))
    allocator.close()

    variant_cols = [6, 10, 13]  # the cells of "Fermion, 1,024-value pages" in rows_out
    take_headers = ["table", "columns", "rows", "page cache", "Fermion ms", "Fermion ms from Python",
                    "Fermion, 1,024-value pages ms",
                    "Lance ms", "Parquet ms", "Fermion vs Lance", "Fermion (1,024-value pages) vs Lance",
                    "Fermion vs Parquet", "Fermion KiB read per row", "Fermion (1,024-value pages) KiB read per row"]
    size_headers = ["table", "rows", "Fermion", "Fermion, 1,024-value pages", "Parquet (Spark, zstd)", "Lance"]
    if not args.small_pages:
        def keep(row, drop):
            return [c for i, c in enumerate(row) if i not in drop]
        rows_out = [keep(r, variant_cols) for r in rows_out]
        take_headers = keep(take_headers, variant_cols)
        bytes_out = [keep(r, [3]) for r in bytes_out]
        size_headers = keep(size_headers, [3])
    publish(spark, os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "take.md"), [
        "# Random access: take rows by position", "",
        f"Machine: {machine_line()}. Rows: main {args.rows:,} (id, 20-character string, 128 x float32 vector), "
        f"blobs {args.blob_rows:,} (id, 4 KiB binary). Median of {args.reps} repetitions after a warm-up, each with "
        "new random rows; formats interleaved within each repetition. Page cache `warm`: each format reads the "
        "same rows once untimed just before (CPU and request costs); `cold`: the OS page cache is dropped before "
        "each timed call of every format (reads from this machine's virtual disk; needs root, else not run). "
        "Fermion: the core take (`Scan.takePositions`), no Spark job, timed by the JVM's clock around the call "
        "(\"from Python\": by Python's clock, with the two py4j calls that pass the rows and make the call); "
        "Lance: pylance 14.0.2 `take` (called in-process); Parquet: pyarrow reading the row groups that hold the rows (Spark-written files, zstd). "
        "Parquet is skipped at 1,000 rows of the main table (it would read the whole file per repetition)." + (
            " \"Fermion, 1,024-value pages\" (`--small-pages`): the same rows written with `column.s.pageRows=1024` "
            "and `column.vec.pageRows=1024` (a zstd page of `s` holds 20 KiB of values instead of 160 KiB, one of "
            "`vec` 8 rows instead of 64; a take decompresses a whole compressed page per row and column)."
            if args.small_pages else ""), "",
        markdown_table(take_headers, rows_out), "",
        "## Sizes (MiB)", "",
        markdown_table(size_headers, bytes_out), "",
        "## Through Spark: `_rowid IN (...)` on Fermion vs `id IN (...)` on Parquet (seconds)", "",
        "Each query runs once untimed just before its timed run (page cache warm for its rows).", "",
        markdown_table(["table", "rows", "Fermion", "Parquet", "Parquet 8 KiB pages", "vs Parquet",
                        "vs Parquet 8 KiB"], spark_rows), "",
    ])


if __name__ == "__main__":
    main()
