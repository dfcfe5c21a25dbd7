#!/usr/bin/env bash
# The whole suite as `make test` runs it (called by scripts/run_tests.sh, inside its network
# namespace, with the environment set up), every test's duration printed:
#   1. test/serial_group.txt alone (rates, latencies, time bounds), then the field profile's
#      timings (test/field_serial.txt against a robot on Wi-Fi), each on its own ROS domain;
#   2. four pytest processes at once, each on its own domain (the machine is half idle with
#      three: most tests wait for a robot, a launch or a link):
#      - test/parallel_group.txt (launches, link outages, fuzz cases);
#      - test/sdk_group.txt (the SDK's programs and MoveIt, mostly waiting);
#      - every other end-to-end and unit file, then the rest of the field-profile pass
#        (test/field_pass.txt);
#      - every other simulator file (test_*_sim.py: the SDK against the simulated robot).
#      Each one's output goes to a log under .work/, printed after.
# An entry FILE::TEST runs that test in its group and the rest of FILE in the lanes of step 2.
# Exits non-zero if any of them failed. Step 2 has a deadline (SPOT_LANE_DEADLINE seconds, 40 min
# unless set: each lane takes 9-13 min here): a pytest still running then gets SIGINT (it prints
# where it was and its summary) and SIGKILL a minute later, so a hang fails with its cause in the
# log instead of outliving CI.
set -uo pipefail
list() { grep -v '^#' "$1" | grep -v '^$'; }
mapfile -t serial < <(list test/serial_group.txt)
mapfile -t parallel < <(list test/parallel_group.txt)
mapfile -t field < <(list test/field_pass.txt)
mapfile -t field_serial < <(list test/field_serial.txt)
mapfile -t sdk < <(list test/sdk_group.txt)
whole=()  # files a group runs whole
deselect=()  # single tests a group runs, out of every other run of their file
for entry in "${serial[@]}" "${parallel[@]}" "${sdk[@]}"; do
  case "$entry" in
    *::*) deselect+=("--deselect=$entry") ;;
    *) whole+=("$entry") ;;
  esac
done
sims=()  # every other file, split in two lanes
others=()
for file in test/test_*.py; do
  [[ " ${whole[*]} " == *" $file "* ]] && continue
  case "$file" in
    *_sim.py) sims+=("$file") ;;
    *) others+=("$file") ;;
  esac
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
deadline=$(( $(date +%s) + ${SPOT_LANE_DEADLINE:-2400} ))
timed() {  # timed COMMAND...: COMMAND, interrupted at the lanes' deadline
  local left=$(( deadline - $(date +%s) ))
  timeout --signal=INT --kill-after=60 "$(( left > 1 ? left : 1 ))" "$@"
}
lanes=()  # "log pid" of each lane
lane() {  # lane LOG COMMAND...: COMMAND in the background, its output in LOG
  local log=$1
  shift
  "$@" > "$log" 2>&1 &
  lanes+=("$log $!")
}
lane .work/test-parallel.log timed env ROS_DOMAIN_ID="$(next 2)" \
  python -m pytest --durations=0 "${deselect[@]}" "${parallel[@]}"
lane .work/test-sdk.log timed env ROS_DOMAIN_ID="$(next 4)" \
  python -m pytest --durations=0 "${deselect[@]}" "${sdk[@]}"
others_then_field() {
  local code=0
  timed env ROS_DOMAIN_ID="$(next 3)" python -m pytest --durations=0 "${deselect[@]}" \
    "${others[@]}" || code=1
  echo "[test] field-profile pass"
  timed env SPOT_SIM_PROFILE=field ROS_DOMAIN_ID="$(next 5)" python -m pytest --durations=0 \
    "${field[@]}" || code=1
  return "$code"
}
lane .work/test-others.log others_then_field
lane .work/test-sims.log timed env ROS_DOMAIN_ID="$(next 6)" \
  python -m pytest --durations=0 "${deselect[@]}" "${sims[@]}"
echo "[test] four processes at once: ${parallel[*]}; ${sdk[*]}; every other file, then" \
  "the field-profile pass; every other simulator file (logs in .work/)"
for entry in "${lanes[@]}"; do
  read -r log pid <<< "$entry"
  wait "$pid" || status=1
done
for entry in "${lanes[@]}"; do
  read -r log pid <<< "$entry"
  echo "[test] $log:"
  cat "$log"
done
echo "[test] exit $status, $(( $(date +%s) - started )) s in all"
exit "$status"
