"""Random access (issue: take rows by position): the same random rows fetched from Fermion (the
core take, called in the JVM without a Spark job), Lance (pylance `take`) and Parquet (pyarrow,
reading the row groups that hold the rows), then through Spark: Fermion `_rowid IN (...)` against
Spark filtering Parquet on `id IN (...)` (Parquet written with default and with 8 KiB pages).

Tables: `main` (int64 id, a 20-character string, a 128-float vector) and `blobs` (int64 id and a
4 KiB binary). Rows are in id order in every format, so position p holds id p everywhere (checked).
Formats run interleaved, each repetition with fresh random rows; the OS page cache is warm for
all of them (the files fit in memory), so these are CPU and request costs, not disk seeks.
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
from harness import machine_line, markdown_table, progress, publish, session, size_of  # noqa: E402


def generate(spark, base, name, rows, columns_sql, partitions):
    paths = {f: os.path.join(base, f"{name}.{f}") for f in ("fermion", "parquet", "parquet8k", "lance")}
    if all(os.path.exists(p) for p in paths.values()):
        progress(f"reusing {name} ({rows} rows) in {base}")
        return paths
    df = spark.range(0, rows, 1, partitions).selectExpr(*columns_sql)
    start = time.perf_counter()
    df.write.mode("overwrite").format("fermion").option("stableRowIds", "true").save(paths["fermion"])
    progress(f"wrote {name} as fermion in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    df.write.mode("overwrite").parquet(paths["parquet"])
    progress(f"wrote {name} as parquet in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    df.write.mode("overwrite").option("parquet.page.size", "8192").option("parquet.page.row.count.limit", "64") \
        .parquet(paths["parquet8k"])
    progress(f"wrote {name} as parquet (8 KiB pages) in {time.perf_counter() - start:.0f} s")
    import lance
    start = time.perf_counter()
    src = pads.dataset(sorted(os.path.join(paths["parquet"], f) for f in os.listdir(paths["parquet"]) if f.endswith(".parquet")))
    lance.write_dataset(src.scanner(batch_size=8192).to_reader(), paths["lance"], mode="overwrite")
    progress(f"wrote {name} as lance in {time.perf_counter() - start:.0f} s")
    return paths


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
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "take"))
    args = ap.parse_args()
    spark = session("take-bench", extra={"spark.sql.files.maxRecordsPerFile": "0"})
    jvm = spark.sparkContext._jvm
    conf = spark._jsc.hadoopConfiguration()
    os.makedirs(args.data, exist_ok=True)
    tables = {
        "main": (generate(spark, args.data, f"main-{args.rows}", args.rows, [
            "id", "substr(sha2(cast(id as string), 256), 1, 20) as s",
            "transform(sequence(1, 128), i -> cast(hash(id, i) / 2147483647.0 as float)) as vec"], 16), args.rows),
        "blobs": (generate(spark, args.data, f"blobs-{args.blob_rows}", args.blob_rows, [
            "id", "cast(repeat(substr(sha2(cast(id as string), 512), 1, 128), 32) as binary) as payload"], 8),
            args.blob_rows),
    }
    import lance
    scan_pkg = jvm.io.fermion.core.scan
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
    for table, (paths, n) in tables.items():
        all_cols = ["id", "s", "vec"] if table == "main" else ["id", "payload"]
        one_col = ["vec"] if table == "main" else ["payload"]
        lance_ds = lance.dataset(paths["lance"])
        pq_reader = ParquetByRowGroup(paths["parquet"])
        snapshot = scan_pkg.Snapshot.open(paths["fermion"], conf)
        for cols in (all_cols, one_col):
            # One scan per column set, reused by every take (it keeps the files it opened).
            scan = snapshot.scanBuilder().select(strings(cols)).build()
            for k in (10, 100, 1000):
                times = {"fermion": [], "lance": [], "parquet": []}
                fermion_bytes = []
                # The JIT compiles the take path during the first takes: warm it up outside the timing.
                for _ in range(100 if k <= 100 else 10):
                    w = scan.takePositions(longs([rnd.randrange(n) for _ in range(k)]), conf, allocator)
                    w.close()
                for rep in range(args.reps + 1):
                    positions = [rnd.randrange(n) for _ in range(k)]
                    fns = {}

                    def f_fermion():
                        b = scan.takePositions(longs(positions), conf, allocator)
                        try:
                            fermion_bytes.append(b.metrics().bytesRead())
                            return b.numRows()
                        finally:
                            b.close()

                    fns["fermion"] = f_fermion
                    fns["lance"] = lambda: lance_ds.take(positions, columns=cols).num_rows
                    if k <= 100 or table == "blobs":
                        fns["parquet"] = lambda: pq_reader.take(positions, cols).num_rows
                    for name, fn in fns.items():
                        start = time.perf_counter()
                        got = fn()
                        if rep > 0:  # the first repetition warms up
                            times[name].append(time.perf_counter() - start)
                        assert got == k, (name, got, k)
                    if rep == 0 and k == 10:
                        ids = lance_ds.take(positions, columns=["id"]).column("id").to_pylist()
                        assert ids == positions, "position p holds id p in every format"
                med = {f: statistics.median(v) for f, v in times.items() if v}
                per_row = statistics.median(fermion_bytes[1:]) / k
                rows_out.append([table, "+".join(cols) if len(cols) < 3 else "all", k,
                                 f"{med['fermion'] * 1000:.1f}", f"{med['lance'] * 1000:.1f}",
                                 f"{med['parquet'] * 1000:.0f}" if "parquet" in med else "(not run)",
                                 f"{med['lance'] / med['fermion']:.2f}x",
                                 f"{med['parquet'] / med['fermion']:.0f}x" if "parquet" in med else "",
                                 f"{per_row / 1024:.1f}"])
                progress(f"{table} {cols} {k} rows: " + ", ".join(f"{f} {t * 1000:.1f} ms" for f, t in med.items()))
        bytes_out.append([table, n, *(f"{size_of(spark, paths[f]) / 2**20:.0f}" for f in ("fermion", "parquet", "lance"))])

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

    publish(spark, os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "take.md"), [
        "# Random access: take rows by position", "",
        f"Machine: {machine_line()}. Rows: main {args.rows:,} (id, 20-character string, 128 x float32 vector), "
        f"blobs {args.blob_rows:,} (id, 4 KiB binary). Median of {args.reps} repetitions after a warm-up, each with "
        "new random rows; formats interleaved within each repetition; OS page cache warm for every format. "
        "Fermion: the core take (`Scan.takePositions`) called in the JVM, no Spark job; Lance: pylance 14.0.2 "
        "`take`; Parquet: pyarrow reading the row groups that hold the rows (Spark-written files, zstd). "
        "Parquet is skipped at 1,000 rows of the main table (it would read the whole file per repetition).", "",
        markdown_table(["table", "columns", "rows", "Fermion ms", "Lance ms", "Parquet ms", "Fermion vs Lance",
                        "Fermion vs Parquet", "Fermion KiB read per row"], rows_out), "",
        "## Sizes (MiB)", "",
        markdown_table(["table", "rows", "Fermion", "Parquet (Spark, zstd)", "Lance"], bytes_out), "",
        "## Through Spark: `_rowid IN (...)` on Fermion vs `id IN (...)` on Parquet (seconds)", "",
        markdown_table(["table", "rows", "Fermion", "Parquet", "Parquet 8 KiB pages", "vs Parquet",
                        "vs Parquet 8 KiB"], spark_rows), "",
    ])


if __name__ == "__main__":
    main()
