"""arm-surface-contact: move the tool along a trajectory while pressing it against a surface
(``spot_sim.manipulation.surface_contact``). The request's gripper command runs with it. The
response has only a header: a refusal (no valid lease, no arm or license, motors off, a
behaviour fault, an invalid request) is a header error; the robot gives no feedback, the robot
state shows the hand and the estimated force on it."""

from bosdyn.api import arm_surface_contact_service_pb2 as pb
from bosdyn.api import arm_surface_contact_service_pb2_grpc, gripper_command_pb2, lease_pb2
from bosdyn.api.header_pb2 import CommonError

from spot_sim.body.arm.commands import gripper_task
from spot_sim.body.commands import CommandRejectedError
from spot_sim.body.reading import ArmReading
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.manipulation.surface_contact import surface_contact
from spot_sim.perception.scene import Scene

_INVALID = CommonError.CODE_INVALID_REQUEST


class ArmSurfaceContactServicer(
        arm_surface_contact_service_pb2_grpc.ArmSurfaceContactServiceServicer):
    def __init__(self, robot: SimRobot, scene: Scene) -> None:
        self.robot, self.clock, self.scene = robot, robot.clock, scene

    @unary(pb.ArmSurfaceContactResponse)
    def ArmSurfaceContact(self, request, response, context):
        robot = self.robot
        use = robot.leases.use(request.lease)
        if use.status != use.STATUS_OK:
            set_error(response, _INVALID, "the lease is not valid: "
                      f"{lease_pb2.LeaseUseResult.Status.Name(use.status)}")
            return
        refusal = self._refusal()
        if refusal is not None:
            set_error(response, _INVALID, refusal)
            return
        try:
            self._start(request.request, robot.arm_reading())
        except (ValueError, CommandRejectedError) as exc:
            set_error(response, _INVALID, str(exc))

    def _refusal(self) -> str | None:
        robot = self.robot
        if not robot.config.has_arm:
            return "this robot has no arm"
        if not robot.license.allows("arm"):
            return robot.license.refusal("arm")
        return robot.motion_refusal()

    def _start(self, request, arm: ArmReading) -> None:
        """Plan the contact and its gripper command from where the arm is, then start both
        as one step (neither if either is invalid)."""
        robot, now = self.robot, self.clock.now_nsec()
        task = surface_contact(arm, self.scene, robot.transforms_snapshot(), request,
                               robot.next_id(), now)
        gripper = None
        if request.HasField("gripper_command"):
            gripper = gripper_task(robot, robot.next_id(), gripper_command_pb2.GripperCommand
                                   .Request(claw_gripper_command=request.gripper_command), now)
        robot.start_arm(task, gripper)


def spec() -> ServiceSpec:
    return ServiceSpec(
        "arm-surface-contact", "bosdyn.api.ArmSurfaceContactService", "api.spot.robot",
        arm_surface_contact_service_pb2_grpc.add_ArmSurfaceContactServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: ArmSurfaceContactServicer(parts.robot,
                                                                    parts.sensors.scene),
                   hardware="arm"),)
