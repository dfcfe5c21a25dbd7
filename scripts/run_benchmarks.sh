#!/usr/bin/env bash
# Run every benchmark under benchmarks/ and leave their JSON in benchmarks/results/
# (about 8 min on a 2-core machine; the README summarises them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/env.sh
for bench in benchmarks/[!_]*.py; do  # _*.py are shared modules
  echo "== $bench"
  python "$bench"
done
echo "== README figures (scripts/render_figures.py)"
python scripts/render_figures.py
