#!/usr/bin/env bash
# The whole suite as `make test` runs it (called by scripts/run_tests.sh, inside its network
# namespace, with the environment set up), every test's duration printed:
#   1. test/serial_group.txt alone (rates, latencies, time bounds), then the field profile's
#      timings (test/field_serial.txt against a robot on Wi-Fi), each on its own ROS domain;
#   2. three pytest processes at once on distinct domains: test/parallel_group.txt; the
#      SDK's programs and MoveIt (test/sdk_group.txt, mostly waiting) followed by the rest of
#      the field-profile pass (test/field_pass.txt); and every other file. The first two's
#      output goes to .work/test-parallel.log and .work/test-sdk.log, printed after.
# An entry FILE::TEST runs that test in its group and the rest of FILE with every other file.
# Exits non-zero if any of them failed.
set -uo pipefail
list() { grep -v '^#' "$1" | grep -v '^$'; }
mapfile -t serial < <(list test/serial_group.txt)
mapfile -t parallel < <(list test/parallel_group.txt)
mapfile -t field < <(list test/field_pass.txt)
mapfile -t field_serial < <(list test/field_serial.txt)
mapfile -t sdk < <(list test/sdk_group.txt)
ignores=()  # what the serial, parallel and sdk groups run, out of the third process's run
for entry in "${serial[@]}" "${parallel[@]}" "${sdk[@]}"; do
  case "$entry" in
    *::*) ignores+=("--deselect=$entry") ;;
    *) ignores+=("--ignore=$entry") ;;
  esac
done
taken=()  # the serial group's single tests, out of the files the other groups run whole
for entry in "${serial[@]}"; do
  case "$entry" in *::*) taken+=("--deselect=$entry") ;; esac
done
domain=$ROS_DOMAIN_ID
next() { echo $(( (domain + $1) % 200 + 1 )); }
started=$(date +%s)
status=0

echo "[test] serial group (domain $domain)"
python -m pytest --durations=0 "${serial[@]}" || status=1
echo "[test] field-profile timings"
SPOT_SIM_PROFILE=field ROS_DOMAIN_ID=$(next 1) python -m pytest --durations=0 \
  "${field_serial[@]}" || status=1

mkdir -p .work
log=.work/test-parallel.log
ROS_DOMAIN_ID=$(next 2) python -m pytest --durations=0 "${taken[@]}" "${parallel[@]}" \
  > "$log" 2>&1 &
side=$!
sdk_log=.work/test-sdk.log
(
  code=0
  ROS_DOMAIN_ID=$(next 4) python -m pytest --durations=0 "${taken[@]}" "${sdk[@]}" || code=1
  echo "[test] field-profile pass"
  SPOT_SIM_PROFILE=field ROS_DOMAIN_ID=$(next 5) python -m pytest --durations=0 "${field[@]}" \
    || code=1
  exit "$code"
) > "$sdk_log" 2>&1 &
programs=$!
echo "[test] every other file (domain $(next 3)); beside it ${parallel[*]} (in $log) and" \
  "${sdk[*]} then the field-profile pass (in $sdk_log)"
ROS_DOMAIN_ID=$(next 3) python -m pytest --durations=0 "${ignores[@]}" || status=1
wait "$side" || status=1
wait "$programs" || status=1
echo "[test] ${parallel[*]}:"
cat "$log"
echo "[test] ${sdk[*]}, then the field-profile pass:"
cat "$sdk_log"
echo "[test] exit $status, $(( $(date +%s) - started )) s in all"
exit "$status"
