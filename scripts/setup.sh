#!/usr/bin/env bash
# Turn a fresh Debian 12 machine with Python 3.11 into a working environment:
#   Debian build tools when missing, .venv with the pinned wheels of requirements.lock,
#   the ROS wheel fix-ups, the ROS tools kit's layers that have a matching prebuilt archive in
#   ../shared/vendor/ros2-cpp, and a colcon build of spot_msgs, (compat) tf2_msgs and control_msgs,
#   spot_description, spot_common, spot_driver, spot_sim and spot_driver_examples.
# Idempotent: each step is skipped when its inputs have not changed since it last succeeded.
set -euo pipefail
shopt -s nullglob

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMPS="$ROOT/.work/stamps"
PYTHON="${PYTHON:-python3.11}"
mkdir -p "$STAMPS"

log() { printf '[setup] %s\n' "$*"; }
hash_of() { { cat "$@" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1; }
stamp_ok() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { printf '%s' "$2" > "$STAMPS/$1"; }

# --- Debian packages ---------------------------------------------------------------------
need_apt=()
command -v "$PYTHON" >/dev/null 2>&1 || need_apt+=(python3.11 python3.11-venv)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
# network namespaces of the across-the-robot tests: DNAT like Spot's port forward, tbf caps
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
command -v tc >/dev/null 2>&1 || need_apt+=(iproute2)
# the wasd example's end-to-end test drives its curses screen in a tmux pane
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
if command -v "$PYTHON" >/dev/null 2>&1; then
  inc="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  [ -f "$inc/Python.h" ] || need_apt+=(python3-dev)
  "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3.11-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing Debian packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# --- Python environment ------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV"
  rm -f "$STAMPS/pip"
fi
touch "$VENV/COLCON_IGNORE"
pip_hash="$(hash_of requirements.lock requirements-kit.lock scripts/fix_wheel_cmake.py)"
if ! stamp_ok pip "$pip_hash"; then
  log "installing pinned Python packages (requirements.lock, requirements-kit.lock)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements.lock \
    -r requirements-kit.lock
  "$VENV/bin/python" scripts/fix_wheel_cmake.py "$VENV"
  rm -f "$STAMPS/build"
  stamp_set pip "$pip_hash"
fi

# --- colcon build ------------------------------------------------------------------------
# tf2_msgs and control_msgs are built from compat/ only where the environment lacks them.
has_ament_package() {
  local IFS=:
  for prefix in $VENV ${AMENT_PREFIX_PATH:-}; do
    case "$prefix" in "$ROOT"/install/*) continue ;; esac  # our own build, not the environment
    [ -e "$prefix/share/ament_index/resource_index/packages/$1" ] && return 0
  done
  return 1
}
# --- the ROS tools kit's layers ------------------------------------------------------------
# Each layer (scripts/ros_tools.sh) whose prebuilt archive in ../shared/vendor/ros2-cpp matches
# this clone's inputs is unpacked, with the Debian packages it runs on (seconds); a layer with
# no matching archive is left to its make target (`make ros-tools`, ...), which builds it.
for layer in $(bash scripts/ros_tools.sh layers); do
  LAYER=$layer bash scripts/ros_tools.sh prebuilt
  kit="$(LAYER=$layer bash scripts/ros_tools.sh path)"
  [ -f "$kit/.complete" ] && AMENT_PREFIX_PATH="$kit${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
done
paths=(spot_msgs spot_description spot_common spot_driver spot_sim spot_driver_examples)
for compat in tf2_msgs control_msgs; do
  if ! has_ament_package "$compat"; then
    paths=("compat/$compat" "${paths[@]}")
  else  # never two of a package on the paths (a built kit brings the real tf2_msgs)
    rm -rf "install/$compat" "build/$compat"
  fi
done

build_hash="$(hash_of requirements.lock {spot_description,spot_common,spot_driver,spot_sim,spot_driver_examples}/{package.xml,setup.py,setup.cfg} \
  spot_driver_examples/README.md spot_msgs/CMakeLists.txt \
  spot_msgs/package.xml spot_msgs/msg/* spot_msgs/srv/* spot_msgs/action/* compat/*/msg/* compat/*/action/* \
  compat/*/CMakeLists.txt compat/*/package.xml spot_driver/launch/* spot_sim/launch/* spot_driver/config/* \
  spot_driver/config/moveit/* spot_driver/config/dds/* spot_description/urdf/* spot_description/srdf/* spot_driver/rviz/*)-${paths[*]}"
if ! stamp_ok build "$build_hash" || [ ! -f install/setup.bash ]; then
  log "building ${paths[*]} with colcon"
  # --symlink-install leaves links to files since moved or removed; setup.py copies each one
  find build install -xtype l -delete 2>/dev/null || true
  (
    # shellcheck disable=SC1091
    source "$VENV/bin/activate"
    export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    colcon --log-base log build --symlink-install --build-base build --install-base install \
      --paths "${paths[@]}" \
      --event-handlers console_cohesion- status- --cmake-force-configure \
      --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$VENV/bin/python" \
      > .work/colcon-build.log 2>&1 || { tail -50 .work/colcon-build.log; exit 1; }
  )
  stamp_set build "$build_hash"
fi
# --- ros2 launch and the ros2 CLI ----------------------------------------------------------
# Not on PyPI: built from the workplace kit (../shared/vendor/ros2-tools) into .work/ros2-tools,
# only where launch_ros is not importable (an apt-installed ROS has its own; never shadow it).
KIT="$ROOT/../shared/vendor/ros2-tools"
if ! "$VENV/bin/python" -c 'import launch_ros' 2>/dev/null; then
  if [ -x "$KIT/install.sh" ]; then
    "$KIT/install.sh" "$VENV" "$ROOT/.work/ros2-tools" > .work/ros2-tools.log 2>&1 \
      || { cat .work/ros2-tools.log; exit 1; }
    log "$(tail -1 .work/ros2-tools.log | cut -c1-120)"
  elif [ -n "${CI:-}" ]; then
    log "WARNING: no ros2 launch (no ROS install and no ../shared/vendor/ros2-tools kit)"
  fi
fi
log "environment ready"
