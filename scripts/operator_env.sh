# Source on the operator's computer: `source scripts/operator_env.sh ROBOT_IP [ROBOT_IP ...]`
# (options: --mode payload_tcp, --discovery-port N). Then RViz, Nav2, rosbag and the ros2 CLI
# in this shell see the driver running on each robot's payload (doc/across_the_robot.md).
eval "$(python3 -m spot_driver.network.operator "$@")"
