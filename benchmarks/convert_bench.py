"""`fermion convert` on the TPC-H-like lineitem (issue 18): Parquet (zstd, written by Spark) to a
Fermion dataset and back, through the `fermion` command exactly as a user runs it (spark-submit,
local[*]), timed, with the sizes before and after and the progress lines it printed.

    benchmarks/run.sh convert [--rows N]

Writes benchmarks/results/convert.md. The round trip is checked: row counts and an order-
insensitive hash of every row of the original and the converted-back Parquet must be equal.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from encodings_bench import lineitem
from harness import machine_line, markdown_table, progress, session, size_of

FERMION = os.path.join(os.path.dirname(sys.executable), "fermion")


def convert(*args):
    start = time.perf_counter()
    p = subprocess.run([FERMION, "convert", "--driver-memory", "3g", "--progress-interval", "2", *args],
                       capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("[fermion convert]")]
    return seconds, lines, p.stdout.strip()


def fingerprint(spark, df):
    row = df.selectExpr("count(*) AS n", "sum(cast(xxhash64(*) AS decimal(38, 0))) AS h").collect()[0]
    return row["n"], row["h"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=6_000_000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "convert.md"))
    load_at_start = os.getloadavg()[0]
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="fermion-convert-bench-")
    src, dst, back = (os.path.join(base, n) for n in ("lineitem.parquet", "lineitem.fermion", "lineitem-back.parquet"))
    spark = session("fermion-convert-bench", extra={"spark.driver.memory": "3g"})
    progress(f"writing lineitem, {args.rows:,} rows, as Parquet (zstd)")
    lineitem(spark, args.rows).write.parquet(src)
    parquet_bytes = size_of(spark, src)
    spark.stop()

    progress("fermion convert --to fermion")
    t1, lines1, summary1 = convert("--to", "fermion", src, dst)
    progress(summary1)
    progress("fermion convert --to parquet")
    t2, lines2, summary2 = convert("--to", "parquet", "--option", "compression=zstd", dst, back)
    progress(summary2)

    spark = session("fermion-convert-bench-check", extra={"spark.driver.memory": "3g"})
    fermion_bytes = size_of(spark, dst)
    back_bytes = size_of(spark, back)
    original = fingerprint(spark, spark.read.parquet(src))
    converted = fingerprint(spark, spark.read.format("fermion").load(dst))
    round_trip = fingerprint(spark, spark.read.parquet(back))
    assert original == converted == round_trip, (original, converted, round_trip)
    files = len([f for f in os.listdir(src) if f.endswith(".parquet")])
    rows = [
        ["Parquet (zstd) -> Fermion", f"{t1:.1f}", f"{parquet_bytes:,}", f"{fermion_bytes:,}", f"{fermion_bytes / parquet_bytes:.3f}",
         f"{parquet_bytes / t1 / 2**20:.1f}"],
        ["Fermion -> Parquet (zstd)", f"{t2:.1f}", f"{fermion_bytes:,}", f"{back_bytes:,}", f"{back_bytes / fermion_bytes:.3f}",
         f"{fermion_bytes / t2 / 2**20:.1f}"],
    ]
    text = [
        f"# `fermion convert`: lineitem, {args.rows:,} rows\n",
        f"{machine_line()} (the command's default `local[*]`), `--driver-memory 3g`. The lineitem of "
        f"`encodings_bench.py` ({args.rows:,} rows, 16 columns) written by Spark as {files} Parquet files with zstd, "
        "converted with the `fermion` command as a user runs it; `seconds` is the command's wall time (JVM and Spark "
        "start-up, the commit and shutdown included; the conversion job's own time is in the summary each command prints, "
        f"below). Load average when the run started: {load_at_start:.1f} (other jobs on a shared machine "
        "slow both commands: a run beside builds took 108 s and 116 s); sizes do not vary. One run, not repeated.\n",
        "Round trip checked: row count and `sum(xxhash64(*))` (as a decimal) of the original Parquet, the Fermion dataset and "
        f"the Parquet converted back are equal ({original[0]:,} rows).\n",
        markdown_table(["conversion", "seconds", "bytes before", "bytes after", "after / before", "input MiB/s"], rows),
        "\n\n## Progress printed by `fermion convert --to fermion` (stderr, `--progress-interval 2`)\n",
        "```\n" + "\n".join(lines1) + "\n```\n",
        "## Summary printed at the end\n",
        "```\n" + summary1 + "\n```\n",
        "## `fermion convert --to parquet`\n",
        "```\n" + "\n".join(lines2) + "\n" + summary2 + "\n```\n",
    ]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(text))
    print("\n".join(text))
    spark.stop()


if __name__ == "__main__":
    main()
