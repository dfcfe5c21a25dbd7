# Source this file to use the environment scripts/setup.sh made: the venv, the colcon
# install space, and ROS settings that keep DDS on loopback.
_SPOT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$_SPOT_ROOT/.venv/bin/activate"
export AMENT_PREFIX_PATH="$_SPOT_ROOT/.venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
# colcon's setup scripts reference unset variables; relax nounset while sourcing them.
case $- in *u*) _spot_nounset=1; set +u ;; *) _spot_nounset=0 ;; esac
# The ROS 2 C++ tools kit's layers when here (`make ros-tools`: robot_state_publisher, tf2,
# ros2 bag; `make nav2-tools`: Nav2; `make rviz-tools`: RViz; `make moveit-tools`: MoveIt;
# `make moveit-rviz-tools`: RViz's MotionPlanning display), before the project's install space
# (whose compat packages step aside for the kit's).
for _spot_layer in $(bash "$_SPOT_ROOT/scripts/ros_tools.sh" layers); do
  _spot_kit="$(LAYER=$_spot_layer bash "$_SPOT_ROOT/scripts/ros_tools.sh" path 2>/dev/null || true)"
  if [ -n "$_spot_kit" ] && [ -f "$_spot_kit/.complete" ]; then
    # shellcheck disable=SC1090,SC1091
    source "$_spot_kit/local_setup.bash"
  fi
done
unset _spot_layer
unset _spot_kit
# shellcheck disable=SC1091
source "$_SPOT_ROOT/install/setup.bash"
# ros2 launch and the ros2 CLI built by scripts/setup.sh from the workplace kit, if any.
if [ -f "$_SPOT_ROOT/.work/ros2-tools/setup.bash" ]; then
  # shellcheck disable=SC1091
  source "$_SPOT_ROOT/.work/ros2-tools/setup.bash"
fi
[ "$_spot_nounset" = 1 ] && set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# The deprecated ROS_LOCALHOST_ONLY is left unset: rcl warns whenever it is set, even to 0.
unset ROS_LOCALHOST_ONLY
# Domain 0 unless one is set: ROS's default, and one of the three (0-2) whose DDS ports cross
# Spot's payload port forward, so the README's payload launch works from this shell. Test
# runs pick a domain of their own (scripts/run_tests.sh).
if [ -z "${ROS_DOMAIN_ID:-}" ]; then
  export ROS_DOMAIN_ID=0 SPOT_DOMAIN_FROM_ENV=1
fi
export ROS_LOG_DIR="$_SPOT_ROOT/.work/ros_log"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# The packages' source trees first: an edit takes effect without a rebuild.
export PYTHONPATH="$_SPOT_ROOT/spot_common:$_SPOT_ROOT/spot_driver:$_SPOT_ROOT/spot_sim:$_SPOT_ROOT/spot_driver_examples${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$ROS_LOG_DIR"
unset _spot_nounset
# Large messages (images, clouds) need a bigger Fast DDS shared-memory segment.
export FASTRTPS_DEFAULT_PROFILES_FILE="${FASTRTPS_DEFAULT_PROFILES_FILE:-$_SPOT_ROOT/spot_driver/config/fastdds_shm.xml}"
export FASTDDS_DEFAULT_PROFILES_FILE="${FASTDDS_DEFAULT_PROFILES_FILE:-$_SPOT_ROOT/spot_driver/config/fastdds_shm.xml}"
