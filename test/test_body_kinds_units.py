"""The simulated robot's command kinds (``spot_sim/body/kinds/``), each declared once: the
request each names is a field of the Spot API's command protos, every kind a RobotCommand
can carry gives feedback, and the robot's own commands (a dance's, a walk's) are kinds too."""

from bosdyn.api import full_body_command_pb2, mobility_command_pb2, robot_command_pb2

from spot_sim.body import kinds

MOBILITY = mobility_command_pb2.MobilityCommand.Request.DESCRIPTOR
FULL_BODY = full_body_command_pb2.FullBodyCommand.Request.DESCRIPTOR


def test_each_kind_names_a_request_field_of_its_proto():
    for kind in kinds.KINDS.values():
        if kind.request is None:
            continue
        proto = FULL_BODY if kind.full_body else MOBILITY
        assert kind.request in proto.fields_by_name, (kind.name, kind.request)
        assert kind.feedback is not None, kind.name


def test_a_robot_command_finds_its_kind_or_says_why_not():
    command = robot_command_pb2.RobotCommand()
    command.synchronized_command.mobility_command.stand_request.SetInParent()
    assert kinds.classify(command)[0].name == "stand"
    command = robot_command_pb2.RobotCommand()
    command.full_body_command.stop_request.SetInParent()
    assert kinds.classify(command)[0].name == "stop_fb"
    assert kinds.classify(robot_command_pb2.RobotCommand()) == (None, "empty command")
    command = robot_command_pb2.RobotCommand()
    command.full_body_command.payload_estimation_request.SetInParent()
    assert kinds.classify(command) == (
        None, "full body command 'payload_estimation_request' is not supported")


def test_what_the_robot_starts_itself_is_a_kind():
    """Docking, GraphNav, auto-return and keepalive start these; a dance starts its own."""
    for name in ("stop", "stand", "sit", "trajectory", "safe_power_off", "choreography"):
        assert name in kinds.KINDS
