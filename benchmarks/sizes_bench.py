"""File sizes of the TPC-H tables (issue 15): Fermion and Parquet (zstd) written by Spark from the
same DataFrame of tpchgen-cli's table (dbgen's rows, in dbgen order), beside Vortex (`vortex-data`,
its default and `compact` writers) and Lance (`pylance`, file format 2.1) written from the same
rows as one Arrow table. Fermion twice: with its defaults (zstd level 3, as Parquet's), and with
`compressionLevel` 19, the counterpart of Vortex's `compact` (which trades write speed for size).
lineitem and partsupp also per column.

    benchmarks/run.sh sizes [--scale 1] [--tables lineitem,orders]

The Spark-written files are reused by `benchmarks/run.sh tpch` (and reused from it when present);
Fermion's copies only while the jar that wrote them is the one loaded (harness.reusable).
"""
import argparse
import collections
import os
import shutil
import sys
import time

import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import machine_line, mark_written, markdown_table, progress, publish, reusable, session, size_of, write_all  # noqa: E402
from tpch_bench import generate  # noqa: E402
from tpch_queries import TABLES  # noqa: E402
from fermion_spark import tools  # noqa: E402

SPARK_FORMATS = ("fermion", "parquet")


def tree_size(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


COMPACT_LEVEL = 19
COMPACT = f"Fermion level {COMPACT_LEVEL}"
PER_COLUMN = ("lineitem", "partsupp")


def vortex_compact(table, path):
    import vortex as vx
    vx.io.VortexWriteOptions.compact().write(table, path)


def vortex_columns(table, work):
    """Each column of `table` written alone as Vortex compact: its size in bytes."""
    import pyarrow as pa
    sizes = {}
    for c in table.column_names:
        path = os.path.join(work, "column.vortex")
        vortex_compact(pa.table({c: table[c]}), path)
        sizes[c] = os.path.getsize(path)
        os.remove(path)
    return sizes


def other_formats(table, work):
    """Sizes of `table` (an Arrow table) as Vortex default, Vortex compact and Lance 2.1."""
    import lance
    import vortex as vx
    sizes = {}
    for name, write in (("Vortex", lambda p: vx.io.write(table, p)),
                        ("Vortex compact", lambda p: vortex_compact(table, p)),
                        ("Lance 2.1", lambda p: lance.write_dataset(table, p, data_storage_version="2.1"))):
        path = os.path.join(work, name.replace(" ", "-").lower())
        shutil.rmtree(path, ignore_errors=True)
        if os.path.exists(path):
            os.remove(path)
        write(path)
        sizes[name] = tree_size(path)
        progress(f"wrote as {name}: {sizes[name] / 1e6:.1f} MB")
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
    return sizes


def fermion_columns(spark, path):
    sizes = collections.Counter()
    for d, _, fs in os.walk(path):
        for f in fs:
            if f.endswith(".fermion"):
                for c in tools.inspect(os.path.join(d, f), spark=spark)["columns"]:
                    sizes[c["name"]] += c["bytes"]
    return sizes


def parquet_columns(path):
    sizes = collections.Counter()
    for d, _, fs in os.walk(path):
        for f in fs:
            if f.endswith(".parquet"):
                meta = pq.ParquetFile(os.path.join(d, f)).metadata
                for g in range(meta.num_row_groups):
                    for c in range(meta.num_columns):
                        col = meta.row_group(g).column(c)
                        sizes[col.path_in_schema] += col.total_compressed_size
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1)
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tpch"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "sizes.md"))
    args = ap.parse_args()
    base = os.path.join(args.data, f"sf{args.scale:g}")
    generate(args.scale, os.path.join(base, "source"))
    spark = session("fermion-sizes-bench")
    work = os.path.join(base, "others")
    os.makedirs(work, exist_ok=True)
    rows, columns = [], []
    totals = collections.Counter()
    for t in args.tables.split(","):
        source = os.path.join(base, "source", f"{t}.parquet")
        paths = write_all(spark, spark.read.parquet(source), base, t, formats=SPARK_FORMATS, reuse=True)
        compact = os.path.join(base, f"{t}.fermion-level{COMPACT_LEVEL}")
        if not reusable(compact, fermion=True):
            start = time.perf_counter()
            spark.read.parquet(source).write.format("fermion").option("compressionLevel", COMPACT_LEVEL).save(compact)
            mark_written(compact)
            progress(f"wrote {t} as fermion at level {COMPACT_LEVEL} in {time.perf_counter() - start:.1f} s")
        arrow = pq.read_table(source)
        sizes = {"Fermion": size_of(spark, paths["fermion"]), COMPACT: size_of(spark, compact),
                 "Parquet": size_of(spark, paths["parquet"])}
        sizes.update(other_formats(arrow, work))
        totals.update(sizes)
        smallest = min((v, k) for k, v in sizes.items() if not k.startswith("Fermion"))
        rows.append([t, *[f"{v / 1e6:.1f}" for v in sizes.values()], f"{sizes['Fermion'] / sizes['Parquet']:.3f}",
                     f"{smallest[1]} {sizes['Fermion'] / smallest[0]:.3f}",
                     f"{sizes[COMPACT] / sizes['Vortex compact']:.3f}"])
        progress(f"{t}: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()))
        if t in PER_COLUMN:
            fc, lc = fermion_columns(spark, paths["fermion"]), fermion_columns(spark, compact)
            pc, vc = parquet_columns(paths["parquet"]), vortex_columns(arrow, work)
            columns += [[t, c, *[f"{x[c] / 1e6:.2f}" for x in (fc, lc, pc, vc)], f"{fc[c] / pc[c]:.3f}",
                         f"{lc[c] / vc[c]:.3f}"] for c in sorted(fc, key=lambda c: -pc[c])]
    names = list(totals)
    rows.append(["**total**", *[f"{totals[k] / 1e6:.1f}" for k in names],
                 f"**{totals['Fermion'] / totals['Parquet']:.3f}**", "",
                 f"**{totals[COMPACT] / totals['Vortex compact']:.3f}**"])
    shutil.rmtree(work, ignore_errors=True)
    publish(spark, args.out, [
        "# File sizes: Fermion, Parquet, Vortex, Lance\n",
        f"{machine_line()}; TPC-H sf{args.scale:g} from tpchgen-cli (dbgen's rows in dbgen order, lineitem sorted "
        "by `l_orderkey`). Fermion (defaults) and Parquet (zstd, Spark's defaults otherwise) written by Spark from "
        "the same DataFrame of tpchgen-cli's Parquet file (two files per table, one per task); Vortex "
        "(`vortex-data` 0.90, `vortex.io.write` and `VortexWriteOptions.compact()`) and Lance (`pylance` 14, "
        "`data_storage_version=\"2.1\"`) written from the same rows read as one Arrow table (one file). "
        f"`{COMPACT}` is Fermion written with `compressionLevel` {COMPACT_LEVEL} (zstd's level; the default is 3, "
        "as Parquet's), the counterpart of Vortex's `compact` writer, which trades write speed for size. "
        "Sizes in MB (10^6 bytes), every file of the table counted.\n",
        markdown_table(["table", *[f"{k} MB" for k in names], "Fermion / Parquet", "Fermion / smallest other",
                        f"{COMPACT} / Vortex compact"], rows),
        "",
        f"{' and '.join(PER_COLUMN)} per column (MB; Fermion: all streams of the column; Parquet: compressed column "
        "chunks; Vortex compact: the column written alone as a file):\n",
        markdown_table(["table", "column", "Fermion MB", f"{COMPACT} MB", "Parquet MB", "Vortex compact MB",
                        "Fermion / Parquet", f"{COMPACT} / Vortex compact"], columns),
        ""])


if __name__ == "__main__":
    main()
