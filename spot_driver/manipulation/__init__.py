"""Arm, gripper and manipulation: commands with their checks (``arm.py``), joint
trajectories (``arm_trajectory.py``), the followed tasks (``tasks.py``) and the ``spot_arm``
node. Grasps picked in an image name perception's camera sources."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="manipulation",
    summary="start the arm, gripper and manipulation actions (spot_arm)",
    nodes=("spot_driver.manipulation.node:ArmNode",),
    parameters="arm and gripper",
    uses=("perception",))
