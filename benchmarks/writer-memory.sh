#!/usr/bin/env bash
# Peak writer memory for a narrow and a wide table; writes benchmarks/results/writer-memory.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/dev/sbt" "benchmarks/runMain io.fermion.benchmarks.WriterMemoryBenchmark benchmarks/results/writer-memory.md" < /dev/null
