"""Arm, gripper and manipulation: commands with their checks (``arm.py``), joint
trajectories (``arm_trajectory.py``), the followed tasks (``tasks.py``) and the ``spot_arm``
node. Grasps picked in an image name perception's camera sources."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    'arm and gripper (node spot_arm; goals fail with "this robot has no arm" without one)',
    (
        Parameter("arm_goal_tolerance", 0.02,
                  "rad per joint at the end of a FollowJointTrajectory goal when the goal does "
                  "not set one"),
        Parameter("arm_goal_time_tolerance", 1.0,
                  "s after the trajectory's end to reach the goal tolerance"),
    ))

CAPABILITY = Capability(
    name="manipulation",
    summary="start the arm, gripper and manipulation actions (spot_arm)",
    nodes=("spot_driver.manipulation.node:ArmNode",),
    parameters=PARAMETERS,
    uses=("perception",),
    readme="Arm and gripper (node `spot_arm`)",
    field_test="test/test_manipulation_e2e.py::test_joint_move_reaches_the_target")
