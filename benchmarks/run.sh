#!/usr/bin/env bash
# Runs the Spark benchmarks (all formats side by side) against the freshly built wheel:
#   benchmarks/run.sh all                 every benchmark below, one after another
#   benchmarks/run.sh nested [--rows N]
#   benchmarks/run.sh wide [--columns 1000,10000] [--rows N]
#   benchmarks/run.sh scans [--rows N]
#   benchmarks/run.sh encodings [--rows N] [--lineitem-rows N]
#   benchmarks/run.sh filters [--rows N]
#   benchmarks/run.sh take [--rows N] [--blob-rows N] [--small-pages]   (pylance from benchmarks/requirements.txt)
#   benchmarks/run.sh batch [--rows N]
#   benchmarks/run.sh analytic [--rows N] [--reps N]   TPC-H-like Q6 and Q1 on lineitem
#   benchmarks/run.sh convert [--rows N]      fermion convert of the 6M-row lineitem, both ways (not part of "all")
#   benchmarks/run.sh merge [--rows N] [--changed 0.01]   MERGE of 1 % changed rows vs rewriting the table (not part of "all")
#   benchmarks/run.sh decode                  core decode throughput per page encoding next to memcpy (JVM, no Spark)
# Results go to benchmarks/results/<name>.md; progress goes to the terminal.
# FERMION_BENCH_JFR=/tmp/run.jfr records a Java Flight Recording of the driver (where the time goes).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="${1:?usage: benchmarks/run.sh <all|nested|wide|scans|encodings|filters> [options]}"; shift
if [ "$name" = decode ]; then
  exec "$root/dev/sbt" "benchmarks/runMain io.fermion.benchmarks.EncodingThroughput $root/benchmarks/results/decode.md" < /dev/null
fi
"$root/dev/package"
# Formats compared outside Spark (Lance, Vortex): benchmark-only dependencies, never the product's.
"$root/.venv/bin/pip" install -q -r "$root/benchmarks/requirements.txt"
cd "$root/benchmarks"
if [ "$name" = all ]; then
  for b in wide scans encodings filters nested; do
    echo "[benchmarks] $b"
    "$root/.venv/bin/python" "${b}_bench.py"
  done
  exit 0
fi
exec "$root/.venv/bin/python" "${name}_bench.py" "$@"
