"""Robot state: joint_states, odometry, /tf and /tf_static, status/* topics, from one
RobotState at a time through one pipeline (``pipeline.py``)."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "state (node spot_state)",
    (
        Parameter("robot_state_rate", 50.0, "Hz: joint_states, /tf, odometry"),
        Parameter("status_rate", 50.0, "Hz: status/* topics (capped at robot_state_rate)"),
        Parameter("tf_root", "odom",
                  '"odom" or "vision": root of the TF tree and odometry frame; "body" (as '
                  "spot_ros2): the robot's own tree, body the root, odometry in odom"),
        Parameter("frame_prefix", "",
                  'e.g. "spot1/" for several robots; applied to frames and joints'),
        Parameter("frame_names", "spot",
                  '"spot" (the robot\'s frame names) or "spot_ros2" (spot_ros2\'s: arm_link_*, '
                  "and base_link, front_rail, rear_rail in the model)"),
        Parameter("publish_tf", True,
                  "publish the robot's frames on /tf (false: another node does)"),
        Parameter("max_in_flight", 12,
                  "cap on requests outstanding per stream (robot state, each camera, the "
                  "lidar); below it the number follows the stream's round trip (p95 / period + "
                  "1)"),
    ))

CAPABILITY = Capability(
    name="state",
    summary="joint_states, odometry, TF and status topics (spot_state)",
    nodes=("spot_driver.state.node:StateNode",),
    optional=False,
    parameters=PARAMETERS,
    readme="Robot state (node `spot_state`)",
    health=("stream robot_state",),
    field_test="test/test_core_e2e.py::test_every_topic_arrives_with_a_valid_tree")
