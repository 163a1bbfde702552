#!/usr/bin/env bash
# Runs one Spark benchmark (all formats side by side) against the freshly built wheel:
#   benchmarks/run.sh nested [--rows N]
#   benchmarks/run.sh wide [--columns 1000,10000] [--rows N]
#   benchmarks/run.sh scans [--rows N]
#   benchmarks/run.sh encodings [--rows N] [--lineitem-rows N]
#   benchmarks/run.sh filters [--rows N]
# Results go to benchmarks/results/<name>.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="${1:?usage: benchmarks/run.sh <nested|wide|scans|encodings|filters> [options]}"; shift
"$root/dev/package"
cd "$root/benchmarks"
exec "$root/.venv/bin/python" "${name}_bench.py" "$@"
