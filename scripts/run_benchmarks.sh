#!/usr/bin/env bash
# Run every benchmark under benchmarks/ and leave their JSON in benchmarks/results/
# (about 45 min on a 2-core machine, ten of them driver_memory.py and four the interleaved
# state cycle, which needs the repository's history; the README's figure tables are rendered
# from the JSON at the end).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/env.sh
for bench in benchmarks/[!_]*.py; do  # _*.py are shared modules
  echo "== $bench"
  python "$bench"
done
echo "== benchmarks/perception_e2e.py with sensor-data (best-effort) QoS"
BENCH_SENSOR_QOS=best_effort python benchmarks/perception_e2e.py
echo "== README figures (scripts/render_figures.py)"
python scripts/render_figures.py
