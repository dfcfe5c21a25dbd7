#!/usr/bin/env bash
# Run the test suite in the environment scripts/setup.sh made. DDS stays on loopback, each run
# gets its own ROS_DOMAIN_ID, and where the machine allows it the run happens in a private
# network namespace (unshare -n) so no traffic can leave the machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# A domain of this run's own (3-200: not the 0 a shell that sourced scripts/env.sh uses),
# unless the caller chose one.
if [ -z "${ROS_DOMAIN_ID:-}" ] || [ "${SPOT_DOMAIN_FROM_ENV:-0}" = 1 ]; then
  export ROS_DOMAIN_ID=$(( (RANDOM % 198) + 3 ))
fi
unset SPOT_DOMAIN_FROM_ENV
# shellcheck disable=SC1091
source scripts/env.sh
echo "[test] ROS_DOMAIN_ID=$ROS_DOMAIN_ID ROS_AUTOMATIC_DISCOVERY_RANGE=$ROS_AUTOMATIC_DISCOVERY_RANGE"
# Without arguments: the whole suite in the order scripts/test_groups.sh states (the timing
# files alone, the field-profile timings, then four pytest processes at once), each test's duration
# printed. With arguments: pytest with them, e.g.
# SPOT_SIM_PROFILE=field scripts/run_tests.sh test/test_manipulation_e2e.py (what `make test-field` does).
if [ $# -eq 0 ]; then
  cmd=(bash scripts/test_groups.sh)
else
  cmd=(python -m pytest "$@")
fi
if [ "${SPOT_NO_UNSHARE:-0}" != 1 ] && unshare -n true 2>/dev/null; then
  echo "[test] running in a private network namespace (unshare -n)"
  exec unshare -n bash -c 'ip link set lo up && exec "$@"' bash "${cmd[@]}"
fi
echo "[test] unshare -n not permitted here; DDS is still limited to loopback"
exec "${cmd[@]}"
