#!/usr/bin/env bash
# `make ros-tools` and `make nav2-tools`: the ROS 2 Jazzy C++ tools a Spot user runs beside the
# driver and the PyPI wheels lack, built from the pinned upstream source in
# ../shared/vendor/ros2-cpp against this clone's venv, into prefixes outside the clone. Two
# layers (LAYER=tools, the default, or LAYER=nav2):
#   tools  rclcpp, tf2 and tf2_ros with tf2_echo and Python's tf2_ros, robot_state_publisher,
#          rosbag2 with `ros2 bag` and the mcap storage (about 10 min on 2 cores);
#   nav2   on top of tools: the Nav2 servers launch/nav2.launch.py starts and the plugins
#          config/nav2_params.yaml names (about 35 min on 2 cores).
#
#   ${SPOT_ROS_TOOLS_HOME:-~/.cache/spot_ros2_driver}/ros2-<layer>-jazzy-<key>-<arch>
#
# <key> hashes the lock's ROS wheels and numpy, the source tarballs' names (they carry their
# commits), the packages built, RECIPE (raise it whenever the build steps below change) and,
# for nav2, the tools layer's key: a kit is reused, in seconds, while they are unchanged,
# whatever clone or venv asks.
# Nothing in the kit names the venv it was built with (no RPATH; Python scripts start with
# `/usr/bin/env python3`), so it works from any clone whose scripts/env.sh sources it.
#
#   scripts/ros_tools.sh [build]        build the layer, or reuse it
#   scripts/ros_tools.sh path           print this clone's layer prefix (whether or not built)
#   scripts/ros_tools.sh pack [DIR]     pack the built layer into DIR/<name>.tar.zst (default .work)
#   scripts/ros_tools.sh unpack FILE    unpack an archive made by pack; its name must match
#
# `build` first unpacks ../shared/vendor/ros2-cpp/<name>.tar.zst when one matches. Where an
# apt-installed ROS 2 already has the layer's tools, it does nothing.
set -euo pipefail
shopt -s nullglob

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOURCES="$ROOT/../shared/vendor/ros2-cpp"
VENV="$ROOT/.venv"
HOME_DIR="${SPOT_ROS_TOOLS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/spot_ros2_driver}"
LAYER="${LAYER:-tools}"
case "$LAYER" in
  tools)
    RECIPE=2
    # Colcon packages built (with what they need from the sources), the tarballs they are
    # in, Debian packages they build against, and what an apt-installed ROS 2 shows it has.
    PACKAGES=(robot_state_publisher tf2_ros tf2_ros_py tf2_tools tf2_geometry_msgs ros2bag
              rosbag2_transport rosbag2_storage_mcap rosbag2_storage_default_plugins
              rosbag2_compression_zstd)
    TARBALLS=(rclcpp rcl_interfaces libstatistics_collector class_loader pluginlib
              console_bridge_vendor ament_cmake geometry2 message_filters robot_state_publisher
              urdf-release orocos_kdl_vendor tinyxml2_vendor eigen3_cmake_module kdl_parser
              rosbag2 yaml_cpp_vendor keyboard_handler pybind11_vendor yaml-cpp mcap
              readerwriterqueue)
    APT=(libconsole-bridge-dev libtinyxml2-dev libeigen3-dev liburdfdom-dev
         liburdfdom-headers-dev liborocos-kdl-dev libzstd-dev liblz4-dev pybind11-dev uuid-dev
         libsqlite3-dev libpython3.11-dev zstd)
    APT_HAS=(robot_state_publisher ros2bag)
    ;;
  nav2)
    RECIPE=1
    # launch/nav2.launch.py's servers, config/nav2_params.yaml's plugins (test_nav2_e2e.py
    # brings them up: a server or plugin missing here fails its bring-up)
    PACKAGES=(nav2_controller nav2_smoother nav2_planner nav2_behaviors nav2_bt_navigator
              nav2_waypoint_follower nav2_velocity_smoother nav2_collision_monitor
              nav2_lifecycle_manager nav2_navfn_planner nav2_costmap_2d dwb_core dwb_plugins
              dwb_critics)
    TARBALLS=(navigation2 geometry2 BehaviorTree.CPP bond_core-release angles diagnostics
              geographic_info laser_geometry navigation_msgs cv_bridge robot_localization
              image_common)
    APT=(libgraphicsmagick++1-dev libopencv-dev libboost-python-dev libgeographiclib-dev
         libzmq3-dev libboost-dev libsqlite3-dev)
    APT_HAS=(nav2_controller nav2_bt_navigator nav2_collision_monitor)
    ;;
  *) echo "[ros-tools] FAILED: LAYER is tools or nav2, not $LAYER" >&2; exit 1 ;;
esac

log() { printf '[ros-tools %s] %s\n' "$LAYER" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

tarball_files() {
  local name
  for name in "${TARBALLS[@]}"; do
    local found=("$SOURCES/$name"-[0-9a-f]*.tar.gz)
    [ ${#found[@]} -gt 0 ] || die "missing source: $SOURCES/$name-*.tar.gz"
    printf '%s\n' "${found[@]}"
  done
}

inputs() {  # what a kit is built from: its key hashes these lines
  # of the lock, what the build links and generates against: the ROS wheels and numpy (other
  # pins, e.g. the SDK examples' requirements, do not change the kit)
  grep -iE '^(ros-jazzy-[^=]*|numpy)==' "$ROOT/requirements.lock" | sha256sum | cut -d' ' -f1
  echo "recipe $RECIPE: ${PACKAGES[*]}"
  [ "$LAYER" = tools ] || echo "on tools $(LAYER=tools bash "${BASH_SOURCE[0]}" key)"
  tarball_files | xargs -n1 basename
}

key() { inputs | sha256sum | cut -c1-12; }

name() { echo "ros2-$LAYER-jazzy-$(key)-$(uname -m)"; }
prefix() { echo "$HOME_DIR/$(name)"; }

has_apt_tools() {  # an installed ROS 2 (not this kit) with the layer's tools
  local IFS=: p package
  for p in ${AMENT_PREFIX_PATH:-}; do
    case "$p" in "$HOME_DIR"/*) continue ;; esac
    for package in "${APT_HAS[@]}"; do
      [ -e "$p/share/ament_index/resource_index/packages/$package" ] || continue 2
    done
    return 0
  done
  return 1
}

unpack() {
  local archive="$1" want
  want="$(name).tar.zst"
  [ "$(basename "$archive")" = "$want" ] ||
    die "$(basename "$archive") does not match this clone's inputs (wants $want)"
  local target
  target="$(prefix)"
  rm -rf "$target.partial"
  mkdir -p "$target.partial"
  tar --zstd -xf "$archive" -C "$target.partial"
  rm -rf "$target"
  mv "$target.partial" "$target"
  log "unpacked $(basename "$archive") into $target"
}

pack() {
  local out="${1:-$ROOT/.work}" target
  target="$(prefix)"
  [ -f "$target/.complete" ] || die "no kit built at $target (run: make ros-tools)"
  mkdir -p "$out"
  [ -f "$target/INPUTS" ] || inputs > "$target/INPUTS"
  tar --zstd -cf "$out/$(name).tar.zst" -C "$target" .
  log "packed $(du -h "$out/$(name).tar.zst" | cut -f1) into $out/$(name).tar.zst"
}

# --- the build ---------------------------------------------------------------------------
apt_packages() {
  local missing=() p
  for p in "${APT[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

tools_sources() {  # the tools layer's plain CMake projects and downloads, made local
  local work="$1" target="$2"
  # yaml-cpp >= 0.8 for yaml_cpp_vendor (Debian 12 has 0.7); the mcap and readerwriterqueue
  # sources the rosbag2 vendor packages would download.
  local yaml mcap rwq queues
  yaml=("$work"/src/yaml-cpp-*); mcap=("$work"/src/mcap-*)
  rwq=("$SOURCES"/readerwriterqueue-*.tar.gz)
  mv "${yaml[0]}" "$work/yaml-cpp"
  mv "${mcap[0]}" "$work/mcap"
  rm -rf "$work"/src/readerwriterqueue-*
  # shared_queues_vendor downloads readerwriterqueue by a fixed URL and MD5: the same commit's
  # tarball here instead (its MD5 is the tarball's).
  queues=("$work"/src/rosbag2-*/shared_queues_vendor/CMakeLists.txt)
  sed -i -e "s|URL https://github.com/cameron314/readerwriterqueue/archive/[0-9a-f]*\.zip|URL file://${rwq[0]}|" \
         -e "s|URL_MD5 [0-9a-f]*|URL_MD5 $(md5sum "${rwq[0]}" | cut -d' ' -f1)|" "${queues[0]}"
  log "building yaml-cpp 0.8.0"
  cmake -S "$work/yaml-cpp" -B "$work/build-yaml-cpp" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$target" -DBUILD_SHARED_LIBS=ON -DYAML_CPP_BUILD_TESTS=OFF \
    -DYAML_CPP_BUILD_TOOLS=OFF > "$work/yaml-cpp.log" 2>&1 || { tail -30 "$work/yaml-cpp.log"; die "yaml-cpp"; }
  nice cmake --build "$work/build-yaml-cpp" --target install >> "$work/yaml-cpp.log" 2>&1 ||
    { tail -30 "$work/yaml-cpp.log"; die "yaml-cpp"; }
}

build() {
  local target work started under=""
  target="$(prefix)"
  work="$HOME_DIR/build-$LAYER-$(key)"
  started=$(date +%s)
  [ -x "$VENV/bin/python" ] || die "no venv at $VENV (run: make setup)"
  if [ "$LAYER" != tools ]; then
    under="$(LAYER=tools bash "${BASH_SOURCE[0]}" path)"
    [ -f "$under/.complete" ] || die "the tools layer is not built (run: make ros-tools)"
  fi
  apt_packages
  "$VENV/bin/python" "$ROOT/scripts/fix_wheel_cmake.py" "$VENV" >&2  # Fast DDS's export
  # shellcheck disable=SC1091
  source "$ROOT/scripts/env.sh"  # with the tools layer, when built
  export MAKEFLAGS="-j$(nproc)"
  if [ -f "$work/.unpacked" ]; then  # a build that failed: colcon goes on where it stopped
    log "resuming the build in $work"
  else
    rm -rf "$work" "$target"
    mkdir -p "$work/src" "$work/link" "$target"
    log "unpacking ${#TARBALLS[@]} source tarballs into $work/src"
    local file xml package
    while read -r file; do tar -xzf "$file" -C "$work/src"; done < <(tarball_files)
    # a package the layer below installed is its, not built again (geometry2 holds tf2,
    # there, and tf2_sensor_msgs, here)
    if [ -n "$under" ]; then
      while IFS= read -r xml; do
        package="$(sed -n 's:.*<name>\(.*\)</name>.*:\1:p' "$xml" | head -1)"
        [ -e "$under/share/$package/package.xml" ] && touch "$(dirname "$xml")/COLCON_IGNORE"
      done < <(find "$work/src" -name package.xml)
    fi
    # tracetools exports a bare -llttng-ust; the wheel ships it under a hashed name.
    local lttng
    lttng=("$VENV"/lib/python3.11/site-packages/ros_tracetools.libs/liblttng-ust-[0-9a-f]*.so.*)
    [ ${#lttng[@]} -gt 0 ] && ln -sf "${lttng[0]}" "$work/link/liblttng-ust.so"
    [ "$LAYER" = tools ] && tools_sources "$work" "$target"
    touch "$work/.unpacked"
  fi

  local link_flags="-L$work/link"
  log "building ${PACKAGES[*]} and what they need with colcon"
  set +e
  (
    cd "$work"
    export CMAKE_PREFIX_PATH="$target${under:+:$under}${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    nice colcon --log-base "$work/log" build --merge-install --base-paths src \
      --build-base "$work/build" --install-base "$target" --packages-up-to "${PACKAGES[@]}" \
      --parallel-workers 1 --event-handlers console_cohesion- status- console_start_end+ \
      --cmake-args -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        -DPython3_EXECUTABLE="$VENV/bin/python" -DPYTHON_EXECUTABLE="$VENV/bin/python" \
        -DFETCHCONTENT_SOURCE_DIR_MCAP="$work/mcap" \
        -DBTCPP_UNIT_TESTS=OFF -DBTCPP_EXAMPLES=OFF \
        "-DCMAKE_SHARED_LINKER_FLAGS=$link_flags" "-DCMAKE_MODULE_LINKER_FLAGS=$link_flags" \
        "-DCMAKE_EXE_LINKER_FLAGS=$link_flags -Wl,--no-as-needed -lpython3.11 -Wl,--as-needed"
  ) 2>&1 | tee "$work/colcon.log" | grep --line-buffered -E "^(Starting|Finished|Failed)" >&2
  local status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 0 ] || { tail -60 "$work/colcon.log"; die "colcon build (log: $work/colcon.log)"; }
  # Scripts start with the venv that built them: any clone's venv python instead.
  local script
  while IFS= read -r script; do
    sed -i "1s|^#!$VENV/bin/python[0-9.]*|#!/usr/bin/env python3|" "$script"
  done < <(grep -rlI "^#!$VENV/bin/python" "$target" 2>/dev/null || true)
  inputs > "$target/INPUTS"  # travels in the archive: what its name's key stands for
  date -u +%FT%TZ > "$target/.complete"
  rm -rf "$work"
  log "built in $(( $(date +%s) - started )) s: $target ($(du -sh "$target" | cut -f1))"
}

main() {
  case "${1:-build}" in
    path) prefix ;;
    key) key ;;
    pack) pack "${2:-}" ;;
    unpack)
      [ $# -eq 2 ] || die "usage: ros_tools.sh unpack FILE"
      unpack "$2"
      if [ -d "$ROOT/install/tf2_msgs" ]; then "$ROOT/scripts/setup.sh" >&2; fi
      ;;
    build)
      local started target prebuilt
      started=$(date +%s.%N)
      target="$(prefix)"
      if [ -z "${SPOT_ROS_TOOLS_FORCE:-}" ] && has_apt_tools; then
        log "ROS 2 on this machine has ${APT_HAS[*]}: nothing to build"
        return 0
      fi
      if [ ! -f "$target/.complete" ]; then
        prebuilt="$SOURCES/$(name).tar.zst"
        if [ -f "$prebuilt" ]; then unpack "$prebuilt"; else build; fi
      fi
      # compat/tf2_msgs steps aside for the kit's real one (scripts/setup.sh decides)
      if [ -d "$ROOT/install/tf2_msgs" ]; then "$ROOT/scripts/setup.sh" >&2; fi
      log "ready: $target [$(awk -v a="$started" -v b="$(date +%s.%N)" \
        'BEGIN { printf "%.1f", b - a }') s]"
      ;;
    *) die "usage: [LAYER=tools|nav2] ros_tools.sh [build|path|key|pack [DIR]|unpack FILE]" ;;
  esac
}

main "$@"
