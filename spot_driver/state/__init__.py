"""Robot state: joint_states, odometry, /tf and /tf_static, status/* topics, from one
RobotState at a time through one pipeline (``pipeline.py``)."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="state",
    summary="joint_states, odometry, TF and status topics (spot_state)",
    nodes=("spot_driver.state.node:StateNode",),
    optional=False,
    parameters="state")
