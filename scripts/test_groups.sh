#!/usr/bin/env bash
# The whole suite as `make test` runs it (called by scripts/run_tests.sh, inside its network
# namespace, with the environment set up): two pytest processes at once on distinct ROS
# domains. The parallel group's output goes to .work/test-parallel.log and is printed after
# the main group's; the exit status is non-zero if either failed.
set -uo pipefail
list() { grep -v '^#' "$1" | grep -v '^$'; }
mapfile -t parallel < <(list test/parallel_group.txt)
mapfile -t field < <(list test/field_pass.txt)
ignores=()
for file in "${parallel[@]}"; do ignores+=("--ignore=$file"); done
mkdir -p .work
log=.work/test-parallel.log
domain=$ROS_DOMAIN_ID
started=$(date +%s)
(
  ROS_DOMAIN_ID=$(( domain % 200 + 1 )) python -m pytest --durations=0 "${parallel[@]}"
  group=$?
  echo "[test] field-profile pass"
  SPOT_SIM_PROFILE=field ROS_DOMAIN_ID=$(( (domain + 1) % 200 + 1 )) \
    python -m pytest --durations=0 "${field[@]}"
  field_status=$?
  exit $(( group != 0 || field_status != 0 ))
) > "$log" 2>&1 &
side=$!
echo "[test] main group (domain $domain); parallel group and field pass in $log"
python -m pytest --durations=0 "${ignores[@]}"
main=$?
wait "$side"
other=$?
echo "[test] parallel group (${parallel[*]}), then the field-profile pass:"
cat "$log"
echo "[test] main group exit $main, parallel group + field pass exit $other," \
     "$(( $(date +%s) - started )) s in all"
exit $(( main != 0 || other != 0 ))
