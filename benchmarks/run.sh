#!/usr/bin/env bash
# Runs the Spark benchmarks (all formats side by side) against the freshly built wheel:
#   benchmarks/run.sh all                 every benchmark below, one after another
#   benchmarks/run.sh nested [--rows N]
#   benchmarks/run.sh wide [--columns 1000,10000] [--rows N]
#   benchmarks/run.sh scans [--rows N]
#   benchmarks/run.sh encodings [--rows N] [--lineitem-rows N]
#   benchmarks/run.sh filters [--rows N]
#   benchmarks/run.sh joins [--rows N] [--reps N]   star joins on a sorted date key: runtimeFilters on/off vs Parquet (not part of "all")
#   benchmarks/run.sh take [--rows N] [--blob-rows N] [--small-pages]   (pylance from benchmarks/requirements.txt)
#   benchmarks/run.sh batch [--rows N]
#   benchmarks/run.sh analytic [--rows N] [--reps N]   TPC-H-like Q6 and Q1 on lineitem
#   benchmarks/run.sh convert [--rows N]      fermion convert of the 6M-row lineitem, both ways (not part of "all")
#   benchmarks/run.sh merge [--rows N] [--changed 0.01]   MERGE of 1 % changed rows vs rewriting the table (not part of "all")
#   benchmarks/run.sh tpch [--scale 1] [--reps 5] [--queries 1,6]   the 22 TPC-H queries, Fermion vs Parquet
#   benchmarks/run.sh sizes [--scale 1]       TPC-H table sizes: Fermion, Parquet, Vortex, Lance (not part of "all")
#   benchmarks/run.sh decode                  core decode throughput per page encoding next to memcpy (JVM, no Spark)
#   benchmarks/run.sh wide-open [--columns 1000,10000,100000]   open a wide file, read 10 columns: time and metadata bytes (JVM, no Spark)
#   benchmarks/run.sh charts [name ...]       only re-render the charts of committed results tables
# Results go to benchmarks/results/<name>.md, each rendered as a chart beside it (<name>.png, charts.py);
# progress goes to the terminal. tpch, sizes, analytic, batch and take keep the tables they write under
# benchmarks/data/ for later runs; a Fermion copy is reused only while the jar that wrote it is the
# one built now (its sha256 beside it, in <table>.jar-sha256), and is written again otherwise.
# FERMION_BENCH_JFR=/tmp/run.jfr records a Java Flight Recording of the driver (where the time goes).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="${1:?usage: benchmarks/run.sh <all|nested|wide|scans|encodings|filters> [options]}"; shift
# Formats compared outside Spark (Lance, Vortex), the TPC-H generator and the chart renderer:
# benchmark-only dependencies, never the product's.
requirements() { "$root/.venv/bin/pip" install -q -r "$root/benchmarks/requirements.txt"; }
chart() { "$root/.venv/bin/python" "$root/benchmarks/charts.py" "$@"; }
case "$name" in
  charts) requirements; chart "$@"; exit 0 ;;
  decode)
    "$root/dev/sbt" "benchmarks/runMain io.fermion.benchmarks.EncodingThroughput $root/benchmarks/results/decode.md" < /dev/null
    requirements; chart decode; exit 0 ;;
  wide-open)
    columns=1000,10000,100000
    if [ "${1:-}" = --columns ]; then columns="$2"; fi
    mkdir -p "$root/benchmarks/data/wide-open"
    "$root/dev/sbt" "benchmarks/runMain io.fermion.benchmarks.WideOpen $root/benchmarks/results/wide-open.md $root/benchmarks/data/wide-open $columns" < /dev/null
    requirements; chart wide-open; exit 0 ;;
esac
# The take benchmark times the core take inside the JVM (benchmarks/src/.../TakeTimer.scala).
if [ "$name" = take ]; then "$root/dev/sbt" benchmarks/compile < /dev/null; fi
"$root/dev/package"
requirements
cd "$root/benchmarks"
if [ "$name" = all ]; then
  for b in wide scans encodings filters nested; do
    echo "[benchmarks] $b"
    "$root/.venv/bin/python" "${b}_bench.py"
    chart "$b"
  done
  exit 0
fi
"$root/.venv/bin/python" "${name}_bench.py" "$@"
chart "$name"
