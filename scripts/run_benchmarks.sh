#!/usr/bin/env bash
# Run every benchmark under benchmarks/ and leave their JSON in benchmarks/results/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/env.sh
for bench in benchmarks/*.py; do
  echo "== $bench"
  python "$bench"
done
