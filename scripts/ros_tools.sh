#!/usr/bin/env bash
# `make ros-tools`, `make nav2-tools`, `make rviz-tools`, `make moveit-tools` and
# `make moveit-rviz-tools`: the ROS 2
# Jazzy C++ tools a Spot user runs beside the driver and the PyPI wheels lack, built from the
# pinned upstream source in ../shared/vendor/ros2-cpp against this clone's venv, into prefixes
# outside the clone. Layers (LAYER=tools, the default, or one of LAYERS below):
#   tools   rclcpp, tf2 and tf2_ros with tf2_echo and Python's tf2_ros, robot_state_publisher,
#           rosbag2 with `ros2 bag` and the mcap storage (about 18 min on 2 cores);
#   nav2    on tools: the Nav2 servers launch/nav2.launch.py starts and the plugins
#           config/nav2_params.yaml names (about 60 min on 2 cores);
#   rviz    on tools: rviz2 with every default display, Qt 5 and OGRE 1.12 from Debian;
#   moveit  on tools: move_group with OMPL, KDL kinematics and the simple controller manager,
#           MoveGroupInterface (Python: moveit_configs_utils), OMPL 1.7.0 and osqp built here;
#   moveit_rviz  on tools, rviz and moveit: RViz's MotionPlanning display
#           (moveit_ros_visualization, with moveit_ros_robot_interaction).
#
#   ${SPOT_ROS_TOOLS_HOME:-~/.cache/spot_ros2_driver}/ros2-<layer>-jazzy-<key>-<arch>
#
# <key> hashes the lock's ROS wheels and numpy, the source tarballs' names (they carry their
# commits), the packages built, RECIPE (raise it whenever the build steps below change) and
# the keys of the layers below: a kit is reused, in seconds, while they are unchanged,
# whatever clone or venv asks.
# Nothing in the kit names the venv it was built with (no RPATH; Python scripts start with
# `/usr/bin/env python3`), so it works from any clone whose scripts/env.sh sources it.
#
#   scripts/ros_tools.sh [build]        build the layer, or reuse it
#   scripts/ros_tools.sh prebuilt       unpack the matching archive from ../shared/vendor/ros2-cpp
#                                       (with the Debian packages it runs on) if there is one and
#                                       the layer is not here; never builds (scripts/setup.sh)
#   scripts/ros_tools.sh status         "ready", "archive" (a matching archive is there, not yet
#                                       unpacked) or "absent"; the tests' skip rule reads it
#   scripts/ros_tools.sh path           print this clone's layer prefix (whether or not built)
#   scripts/ros_tools.sh layers         print every layer's name, each after those below it
#   scripts/ros_tools.sh pack [DIR]     pack the built layer into DIR/<name>.tar.zst (default .work)
#   scripts/ros_tools.sh unpack FILE    unpack an archive made by pack; its name must match
#
# `build` first unpacks ../shared/vendor/ros2-cpp/<name>.tar.zst when one matches. Where an
# apt-installed ROS 2 already has the layer's tools, it does nothing.
set -euo pipefail
shopt -s nullglob

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOURCES="${SPOT_ROS2_CPP_DIR:-$ROOT/../shared/vendor/ros2-cpp}"
VENV="$ROOT/.venv"
HOME_DIR="${SPOT_ROS_TOOLS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/spot_ros2_driver}"
LAYERS=(tools nav2 rviz moveit moveit_rviz)  # each after the layers it builds on
LAYER="${LAYER:-tools}"
BELOW=()      # layers this one builds on
PREPARE=""    # a function run once on the unpacked sources before colcon
CMAKE_EXTRA=()
case "$LAYER" in
  tools)
    RECIPE=2
    # Colcon packages built (with what they need from the sources), the tarballs they are
    # in, Debian packages they build against and run on, and what an apt-installed ROS 2
    # shows it has.
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
    APT_RUN=(libconsole-bridge1.0 libtinyxml2-9 liburdfdom-model3.0 liborocos-kdl1.5
             libzstd1 liblz4-1 libsqlite3-0 libpython3.11)
    APT_HAS=(robot_state_publisher ros2bag)
    PREPARE=tools_sources
    ;;
  nav2)
    RECIPE=1
    BELOW=(tools)
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
    APT_RUN=(libgraphicsmagick++-q16-12 libopencv-core406 libopencv-imgproc406
             libopencv-imgcodecs406 libboost-python1.74.0 libgeographiclib23 libzmq5
             libsqlite3-0 libuuid1)
    APT_HAS=(nav2_controller nav2_bt_navigator nav2_collision_monitor)
    ;;
  rviz)
    RECIPE=2
    BELOW=(tools)
    PACKAGES=(rviz2 rviz_default_plugins)
    TARBALLS=(rviz interactive_markers resource_retriever image_common laser_geometry
              navigation_msgs point_cloud_transport gz_cmake_vendor gz_utils_vendor
              gz_math_vendor gz-cmake gz-utils gz-math)
    APT=(qtbase5-dev libqt5opengl5-dev libqt5svg5-dev libogre-1.12-dev libassimp-dev
         libcurl4-openssl-dev libfreetype-dev libxrandr-dev libxaw7-dev)
    APT_RUN=(libogre1.12.10 libqt5core5a libqt5gui5 libqt5widgets5 libqt5opengl5 libqt5svg5
             libassimp5 libcurl4 libfreetype6 libxrandr2 libxaw7 libgl1-mesa-dri
             libglx-mesa0 xvfb xauth x11-utils)
    APT_HAS=(rviz2 rviz_default_plugins)
    PREPARE=rviz_sources
    ;;
  moveit)
    RECIPE=1
    BELOW=(tools)
    PACKAGES=(moveit_ros_move_group moveit_ros_planning_interface moveit_planners_ompl
              moveit_kinematics moveit_simple_controller_manager moveit_configs_utils)
    TARBALLS=(moveit2 moveit_msgs srdfdom geometric_shapes random_numbers
              eigen_stl_containers-release warehouse_ros octomap_msgs-release
              object_recognition_msgs control_msgs generate_parameter_library RSL
              cpp_polyfills ruckig ompl launch_param_builder backward_ros-release geometry2
              resource_retriever osqp qdldl)
    APT=(libboost-all-dev libeigen3-dev libfcl-dev liboctomap-dev libbullet-dev
         libassimp-dev libqhull-dev libfmt-dev libssl-dev pkg-config libcurl4-openssl-dev)
    APT_RUN=(libfcl0.7 liboctomap1.9 libbullet3.24 libassimp5 libqhull-r8.0 libfmt9 libcurl4
             libboost-filesystem1.74.0 libboost-program-options1.74.0
             libboost-serialization1.74.0 libboost-thread1.74.0 libboost-date-time1.74.0
             libboost-iostreams1.74.0 libboost-regex1.74.0 libboost-system1.74.0)
    APT_HAS=(moveit_ros_move_group moveit_planners_ompl)
    PREPARE=moveit_sources
    CMAKE_EXTRA=(-DOMPL_REGISTRATION=OFF -DOMPL_BUILD_DEMOS=OFF -DOMPL_BUILD_TESTS=OFF
                 -DOMPL_BUILD_PYBINDINGS=OFF -DOMPL_BUILD_PYTESTS=OFF -DBUILD_TESTS=OFF
                 -DBUILD_EXAMPLES=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Doxygen=ON)
    ;;
  moveit_rviz)
    RECIPE=1
    BELOW=(tools rviz moveit)
    PACKAGES=(moveit_ros_visualization)
    TARBALLS=(moveit2)
    APT=(qtbase5-dev libqt5opengl5-dev libeigen3-dev libfmt-dev)
    APT_RUN=(libqt5core5a libqt5gui5 libqt5widgets5 libqt5opengl5 libfmt9)
    APT_HAS=(moveit_ros_visualization)
    ;;
  *) echo "[ros-tools] FAILED: LAYER is one of ${LAYERS[*]}, not $LAYER" >&2; exit 1 ;;
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
  local below
  for below in "${BELOW[@]}"; do
    echo "on $below $(LAYER=$below bash "${BASH_SOURCE[0]}" key)"
  done
  # the wheels only this layer builds against (scripts/setup.sh installs them with the lock)
  [ "$LAYER" != moveit ] || grep -vE '^(#|$)' "$ROOT/requirements-kit.lock"
  tarball_files | xargs -n1 basename
}

key() { inputs | sha256sum | cut -c1-12; }

name() { echo "ros2-$LAYER-jazzy-$(key)-$(uname -m)"; }
prefix() { echo "$HOME_DIR/$(name)"; }
archive() { echo "$SOURCES/$(name).tar.zst"; }

below_prefixes() {  # the prefixes of the layers below, each required built
  local below path
  for below in "${BELOW[@]}"; do
    path="$(LAYER=$below bash "${BASH_SOURCE[0]}" path)"
    [ -f "$path/.complete" ] || die "the $below layer is not here (run: make $below-tools)"
    echo "$path"
  done
}

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

status() {  # ready | archive | absent (test/conftest.py's kit rule reads it)
  if [ -z "${SPOT_ROS_TOOLS_FORCE:-}" ] && has_apt_tools; then echo ready
  elif [ -f "$(prefix)/.complete" ]; then echo ready
  elif [ -f "$(archive)" ]; then echo archive
  else echo absent
  fi
}

relocate() {  # CMake exports naming the venv a layer was built with name this clone's
  # instead (message_filters' names numpy's headers), and files naming the kit home it was
  # built in (the gz vendor packages' extras) name where it is now: what a layer built on
  # top finds
  local prefix="$1" kit files=()
  kit="$(basename "$prefix")"
  mapfile -t files < <(grep -rlI --include='*.cmake' '/\.venv/' "$prefix/share" 2>/dev/null || true)
  [ ${#files[@]} -eq 0 ] || sed -i -E "s#/[^\";]*/\\.venv/#$VENV/#g" "${files[@]}"
  mapfile -t files < <(grep -rlI -e "/$kit" "$prefix" 2>/dev/null || true)
  [ ${#files[@]} -eq 0 ] || sed -i -E "s#/[^\"';: ]*/$kit#$prefix#g" "${files[@]}"
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
  relocate "$target"
  log "unpacked $(basename "$archive") into $target"
}

pack() {
  local out="${1:-$ROOT/.work}" target
  target="$(prefix)"
  [ -f "$target/.complete" ] || die "no kit built at $target (run: make $LAYER-tools)"
  mkdir -p "$out"
  [ -f "$target/INPUTS" ] || inputs > "$target/INPUTS"
  tar --zstd -cf "$out/$(name).tar.zst" -C "$target" .
  log "packed $(du -h "$out/$(name).tar.zst" | cut -f1) into $out/$(name).tar.zst"
}

# --- the build ---------------------------------------------------------------------------
apt_install() {  # the Debian packages named, those not installed yet
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

cmake_project() {  # a plain CMake project of the sources, built once into the layer's prefix
  local work="$1" target="$2" name="$3"; shift 3
  [ -f "$work/.built-$name" ] && return 0
  log "building $name (plain CMake)"
  cmake -S "$work/$name" -B "$work/build-$name" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$target" -DCMAKE_PREFIX_PATH="$target" -DBUILD_TESTING=OFF "$@" \
    > "$work/$name.log" 2>&1 || { tail -30 "$work/$name.log"; die "$name"; }
  nice cmake --build "$work/build-$name" --target install >> "$work/$name.log" 2>&1 ||
    { tail -30 "$work/$name.log"; die "$name"; }
  touch "$work/.built-$name"
}

take() {  # move the unpacked tarball NAME-<commit> out of src/ to WORK/NAME (plain CMake)
  local work="$1" name="$2" found
  found=("$work"/src/"$name"-[0-9a-f]*)
  [ ${#found[@]} -eq 1 ] || die "expected one $name source tree in $work/src"
  mv "${found[0]}" "$work/$name"
}

tools_sources() {  # the tools layer's plain CMake projects and downloads, made local
  local work="$1"
  # yaml-cpp >= 0.8 for yaml_cpp_vendor (Debian 12 has 0.7); the mcap and readerwriterqueue
  # sources the rosbag2 vendor packages would download.
  local rwq queues
  take "$work" yaml-cpp
  take "$work" mcap
  rwq=("$SOURCES"/readerwriterqueue-*.tar.gz)
  rm -rf "$work"/src/readerwriterqueue-*
  # shared_queues_vendor downloads readerwriterqueue by a fixed URL and MD5: the same commit's
  # tarball here instead (its MD5 is the tarball's).
  queues=("$work"/src/rosbag2-*/shared_queues_vendor/CMakeLists.txt)
  sed -i -e "s|URL https://github.com/cameron314/readerwriterqueue/archive/[0-9a-f]*\.zip|URL file://${rwq[0]}|" \
         -e "s|URL_MD5 [0-9a-f]*|URL_MD5 $(md5sum "${rwq[0]}" | cut -d' ' -f1)|" "${queues[0]}"
}

tools_plain() {  # built before colcon, and again when a failed build resumes (once each)
  cmake_project "$1" "$2" yaml-cpp -DBUILD_SHARED_LIBS=ON -DYAML_CPP_BUILD_TESTS=OFF \
    -DYAML_CPP_BUILD_TOOLS=OFF
}

rviz_sources() {
  local work="$1" multiarch ogre vendor
  # gz-cmake3, gz-utils2 and gz-math7, the exact versions the gz_*_vendor packages ask for,
  # built first as plain CMake projects so that the vendor packages find them and download
  # nothing.
  take "$work" gz-cmake; take "$work" gz-utils; take "$work" gz-math
  # rviz_ogre_vendor always downloads OGRE 1.12.10: Debian's 1.12.10 instead. Its download
  # block goes; its CMake extras find Debian's OGREConfig.cmake, whose OGRE_LIBRARY_DIRS says
  # /usr/lib where Debian keeps the libraries in the multiarch folder.
  multiarch="$(gcc -print-multiarch)"
  ogre="/usr/lib/$multiarch/OGRE"
  [ -f "$ogre/cmake/OGREConfig.cmake" ] || die "Debian's OGRE is not installed (libogre-1.12-dev)"
  # test-only packages colcon's --packages-up-to would take along (they need gtest)
  local skipped
  for skipped in "$work"/src/rviz-*/rviz_visual_testing_framework \
                 "$work"/src/rviz-*/rviz_rendering_tests; do
    touch "$skipped/COLCON_IGNORE"
  done
  vendor=("$work"/src/rviz-*/rviz_ogre_vendor)
  python3 - "$vendor/CMakeLists.txt" "$vendor/rviz_ogre_vendor-extras.cmake.in" "$ogre" <<'PY'
import re
import sys

lists, extras, ogre = sys.argv[1:]
text = open(lists).read()
block = re.search(r"\nament_vendor\(ogre_vendor\n.*?\n\)\n", text, re.S)
assert block, "rviz_ogre_vendor: the ament_vendor(ogre_vendor ...) block was not found"
open(lists, "w").write(text.replace(block.group(0), "\n"))
text = open(extras).read()
line = 'set(OGRE_DIR "${@PROJECT_NAME@_DIR}/../../../opt/rviz_ogre_vendor/lib/OGRE/cmake")'
assert line in text, "rviz_ogre_vendor: the extras' OGRE_DIR line was not found"
text = text.replace(line, f'set(OGRE_DIR "{ogre}/cmake")')
found = "find_package(OGRE REQUIRED NO_SYSTEM_ENVIRONMENT_PATH)\n"
assert found in text, "rviz_ogre_vendor: the extras' find_package(OGRE) was not found"
libdir = ogre.rsplit("/", 1)[0]
text = text.replace(found, found + f'set(OGRE_LIBRARY_DIRS "{libdir}")\n'
                    f'set(OGRE_PLUGIN_DIR "{ogre}")\n')
open(extras, "w").write(text)
PY
}

rviz_plain() {
  local work="$1" target="$2"
  cmake_project "$work" "$target" gz-cmake
  cmake_project "$work" "$target" gz-utils -DBUILD_DOCS=OFF
  cmake_project "$work" "$target" gz-math -DBUILD_DOCS=OFF -DSKIP_PYBIND11=ON -DSKIP_SWIG=ON
  # rviz_rendering loads OGRE's plugins from <rviz_ogre_vendor>/opt/rviz_ogre_vendor/lib/OGRE
  local ogre plugin
  ogre="/usr/lib/$(gcc -print-multiarch)/OGRE"
  mkdir -p "$target/opt/rviz_ogre_vendor/lib/OGRE"
  for plugin in "$ogre"/*.so*; do  # OGRE loads NAME.so.<version>
    ln -sf "$plugin" "$target/opt/rviz_ogre_vendor/lib/OGRE/"
  done
}

moveit_sources() {
  local work="$1"
  # osqp with its qdldl submodule, built as a plain CMake project (osqp_vendor git-clones it)
  take "$work" osqp
  take "$work" qdldl
  rmdir "$work/osqp/lin_sys/direct/qdldl/qdldl_sources" 2>/dev/null || true
  mv "$work/qdldl" "$work/osqp/lin_sys/direct/qdldl/qdldl_sources"
}

moveit_plain() {
  cmake_project "$1" "$2" osqp -DBUILD_SHARED_LIBS=ON
}

build() {
  local target work started unders=()
  target="$(prefix)"
  work="$HOME_DIR/build-$LAYER-$(key)"
  started=$(date +%s)
  [ -x "$VENV/bin/python" ] || die "no venv at $VENV (run: make setup)"
  mapfile -t unders < <(below_prefixes)
  [ ${#unders[@]} -eq ${#BELOW[@]} ] || die "a layer below is not here"
  local under
  for under in "${unders[@]}"; do relocate "$under"; done
  apt_install "${APT[@]}" "${APT_RUN[@]}"
  "$VENV/bin/python" "$ROOT/scripts/fix_wheel_cmake.py" "$VENV" >&2  # Fast DDS's export
  # shellcheck disable=SC1091
  source "$ROOT/scripts/env.sh"  # with the layers below, when built
  export MAKEFLAGS="-j$(nproc)"
  if [ -f "$work/.unpacked" ]; then  # a build that failed: colcon goes on where it stopped
    log "resuming the build in $work"
  else
    rm -rf "$work" "$target"
    mkdir -p "$work/src" "$work/link" "$target"
    log "unpacking ${#TARBALLS[@]} source tarballs into $work/src"
    local file xml package
    while read -r file; do tar -xzf "$file" -C "$work/src"; done < <(tarball_files)
    # a package a layer below installed is its, not built again (geometry2 holds tf2,
    # there, and tf2_sensor_msgs, here)
    while IFS= read -r xml; do
      package="$(sed -n 's:.*<name>\(.*\)</name>.*:\1:p' "$xml" | head -1)"
      for under in "${unders[@]}"; do
        [ -e "$under/share/$package/package.xml" ] && touch "$(dirname "$xml")/COLCON_IGNORE"
      done
    done < <(find "$work/src" -name package.xml)
    # tracetools exports a bare -llttng-ust; the wheel ships it under a hashed name.
    local lttng
    lttng=("$VENV"/lib/python3.11/site-packages/ros_tracetools.libs/liblttng-ust-[0-9a-f]*.so.*)
    [ ${#lttng[@]} -gt 0 ] && ln -sf "${lttng[0]}" "$work/link/liblttng-ust.so"
    [ -z "$PREPARE" ] || "$PREPARE" "$work"
    touch "$work/.unpacked"
  fi
  local paths
  paths="$(IFS=:; echo "$target${unders[*]:+:${unders[*]}}")"
  export CMAKE_PREFIX_PATH="$paths${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  [ -z "$PREPARE" ] || "${PREPARE%_sources}_plain" "$work" "$target"

  local link_flags="-L$work/link"
  log "building ${PACKAGES[*]} and what they need with colcon"
  set +e
  (
    cd "$work"
    nice colcon --log-base "$work/log" build --merge-install --base-paths src \
      --build-base "$work/build" --install-base "$target" --packages-up-to "${PACKAGES[@]}" \
      --parallel-workers 1 --event-handlers console_cohesion- status- console_start_end+ \
      --cmake-args -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        -DPython3_EXECUTABLE="$VENV/bin/python" -DPYTHON_EXECUTABLE="$VENV/bin/python" \
        -DFETCHCONTENT_SOURCE_DIR_MCAP="$work/mcap" \
        -DBTCPP_UNIT_TESTS=OFF -DBTCPP_EXAMPLES=OFF "${CMAKE_EXTRA[@]}" \
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

prebuilt() {  # unpack the matching archive (and the Debian packages it runs on), never build
  if [ -z "${SPOT_ROS_TOOLS_FORCE:-}" ] && has_apt_tools; then return 0; fi
  local target
  target="$(prefix)"
  if [ ! -f "$target/.complete" ]; then
    if [ ! -f "$(archive)" ]; then
      log "no prebuilt archive matches this clone ($(name)); make $LAYER-tools builds it"
      return 0
    fi
    apt_install zstd
    unpack "$(archive)"
  fi
  apt_install "${APT_RUN[@]}"
}

main() {
  case "${1:-build}" in
    path) prefix ;;
    layers) printf '%s\n' "${LAYERS[@]}" ;;
    key) key ;;
    status) status ;;
    prebuilt) prebuilt ;;
    pack) pack "${2:-}" ;;
    unpack)
      [ $# -eq 2 ] || die "usage: ros_tools.sh unpack FILE"
      unpack "$2"
      if [ -d "$ROOT/install/tf2_msgs" ]; then "$ROOT/scripts/setup.sh" >&2; fi
      ;;
    build)
      local started target
      started=$(date +%s.%N)
      target="$(prefix)"
      if [ -z "${SPOT_ROS_TOOLS_FORCE:-}" ] && has_apt_tools; then
        log "ROS 2 on this machine has ${APT_HAS[*]}: nothing to build"
        return 0
      fi
      [ -f "$target/.complete" ] || [ ! -f "$(archive)" ] || prebuilt
      [ -f "$target/.complete" ] || build
      # compat/tf2_msgs steps aside for the kit's real one (scripts/setup.sh decides)
      if [ -d "$ROOT/install/tf2_msgs" ]; then "$ROOT/scripts/setup.sh" >&2; fi
      log "ready: $target [$(awk -v a="$started" -v b="$(date +%s.%N)" \
        'BEGIN { printf "%.1f", b - a }') s]"
      ;;
    *) die "usage: [LAYER=<one of ros_tools.sh layers>] ros_tools.sh [build|prebuilt|status|path|layers|key|pack [DIR]|unpack FILE]" ;;
  esac
}

main "$@"
