#!/usr/bin/env bash
# `make run`: the simulated Spot on 127.0.0.1 and the driver connected to it.
# Where `ros2 launch` is available (an apt ROS, or the kit scripts/setup.sh builds) this is
# exactly what users run: `ros2 launch spot_sim spot_sim.launch.py`, with extra arguments as
# launch arguments (e.g. `make run ARGS="arm:=true robot_name:=spot1"`). Without it, the
# console scripts are started directly and extra arguments go to the driver
# (e.g. `make run ARGS="-p tf_root:=vision"`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/env.sh
CERTS="$ROOT/.work/sim-certs"
mkdir -p "$CERTS"
SPOT_SIM_USERNAME="${SPOT_SIM_USERNAME:-user}"
SPOT_SIM_PASSWORD="$(python -c 'import secrets; print(secrets.token_urlsafe(18))')"
export SPOT_SIM_USERNAME SPOT_SIM_PASSWORD

if command -v ros2 >/dev/null 2>&1 && python -c 'import launch_ros' 2>/dev/null; then
  echo "[run] ros2 launch spot_sim spot_sim.launch.py (ROS_DOMAIN_ID=$ROS_DOMAIN_ID)"
  exec ros2 launch spot_sim spot_sim.launch.py certs_dir:="$CERTS" "$@"
fi

SIM_OUT="$ROOT/.work/sim.out"
python -m spot_sim --port 0 --certs-dir "$CERTS" ${SPOT_SIM_ARGS:-} > "$SIM_OUT" &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$SIM_OUT" 2>/dev/null && break
  sleep 0.05
done
port="$(sed -n 's/^spot-sim listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$SIM_OUT")"
[ -n "$port" ] || { echo "simulated robot did not start"; cat "$SIM_OUT"; exit 1; }
echo "[run] simulated Spot on 127.0.0.1:$port (ROS_DOMAIN_ID=$ROS_DOMAIN_ID)"

BOSDYN_CLIENT_USERNAME="$SPOT_SIM_USERNAME" BOSDYN_CLIENT_PASSWORD="$SPOT_SIM_PASSWORD" \
  python -m spot_driver --ros-args --params-file spot_driver/config/spot_driver.yaml \
    -p hostname:=127.0.0.1 -p port:="$port" -p certificate:="$CERTS/ca.crt" \
    -p estop_endpoint:=true "$@"
