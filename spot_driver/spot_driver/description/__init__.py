"""The robot model: the URDF (``robot_model.py``) and ``robot_description``."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "robot model (node spot_description)",
    (
        Parameter("publish_robot_description", True,
                  "robot_description (URDF of the connected robot, latched); the launch file "
                  "turns it off when robot_state_publisher publishes the same model"),
        Parameter("robot_state_publisher", False,
                  "a robot_state_publisher publishes the model's links (legs, arm, hand): the "
                  "driver leaves those frames to it (one parent per frame); the launch file "
                  "sets it when it starts one"),
    ))

CAPABILITY = Capability(
    name="description",
    summary="robot_description of the connected robot (spot_description)",
    nodes=("spot_driver.description.node:DescriptionNode",),
    optional=False,
    parameters=PARAMETERS,
    readme="Robot model, RViz, MoveIt and Nav2 (node `spot_description`)",
    field_test=("test/test_description_e2e.py::"
                "test_late_subscriber_gets_the_robot_description_of_the_connected_robot"))
