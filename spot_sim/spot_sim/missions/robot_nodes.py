"""Mission nodes that act on the robot through its own services: lease, power, robot
commands, docking, dock and robot state, behaviour faults.

Robot commands that need an end time get the mission's pause time, so a mission whose client
stops renewing it leaves the robot standing still. Each follows the start/tick/halt protocol
of ``spot_sim.missions.nodes.Node``.
"""


from bosdyn.api import basic_command_pb2, power_pb2, robot_command_pb2, robot_state_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import nodes_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2

from spot_sim.missions.nodes import FAILURE, RUNNING, SUCCESS, MissionNodeError, Node

MobilityFeedback = basic_command_pb2.RobotCommandFeedbackStatus
DockFeedback = docking_pb2.DockingCommandFeedbackResponse


class RetainLease(Node):
    def update(self, ctx):
        for lease in ctx.leases:
            use = ctx.robot.retain_lease(lease)
            if use.status != use.STATUS_OK:
                raise MissionNodeError(f"lease {lease.resource} could not be retained")
        return SUCCESS


class BosdynPowerRequest(Node):
    def __init__(self, node_id, name, parameters, request):
        super().__init__(node_id, name, parameters)
        self.request, self.command_id = request, 0

    def start(self, ctx):
        response = ctx.robot.power(self.request, ctx.lease("body"))
        _check_lease(response.lease_use_result)
        if response.status not in (power_pb2.STATUS_SUCCESS, power_pb2.STATUS_IN_PROGRESS):
            raise MissionNodeError(
                f"power request refused: {power_pb2.PowerCommandStatus.Name(response.status)}")
        self.command_id = response.power_command_id

    def update(self, ctx):
        status = ctx.robot.power_feedback(self.command_id)
        if status == power_pb2.STATUS_IN_PROGRESS:
            return RUNNING
        return SUCCESS if status == power_pb2.STATUS_SUCCESS else FAILURE


class BosdynRobotCommand(Node):
    """Stand, sit, stop, velocity and SE2 trajectory commands through robot-command."""

    def __init__(self, node_id, name, parameters, command: robot_command_pb2.RobotCommand,
                 kind: str):
        super().__init__(node_id, name, parameters)
        self.command, self.kind = command, kind
        self.command_id, self.sent_end_ns = 0, 0

    def _send(self, ctx) -> None:
        request = robot_command_pb2.RobotCommandRequest(lease=ctx.lease("body"))
        request.command.CopyFrom(self.command)
        request.clock_identifier = ctx.clock_identifier
        mobility = request.command.synchronized_command.mobility_command
        body = None
        if self.kind == "velocity":
            body = mobility.se2_velocity_request
        elif self.kind == "trajectory":
            body = mobility.se2_trajectory_request
        if body is not None:
            body.end_time.CopyFrom(ctx.timestamp(ctx.pause_ns))
            self.sent_end_ns = ctx.pause_ns
        if self.kind in ("velocity", "trajectory", "stand") and ctx.velocity_limit is not None \
                and not mobility.params.type_url:
            params = spot_command_pb2.MobilityParams()
            params.vel_limit.CopyFrom(ctx.velocity_limit)
            mobility.params.Pack(params)
        response = ctx.robot.robot_command(request)
        _check_lease(response.lease_use_result)
        if response.status != robot_command_pb2.RobotCommandResponse.STATUS_OK:
            raise MissionNodeError(f"robot command refused: {response.message}")
        self.command_id = response.robot_command_id

    def update(self, ctx):
        if self.command_id == 0 or (self.kind in ("velocity", "trajectory")
                                    and ctx.pause_ns != self.sent_end_ns):
            self._send(ctx)  # first tick, or the mission's pause time was renewed
        feedback = ctx.robot.robot_command_feedback(self.command_id).feedback
        mobility = feedback.synchronized_feedback.mobility_command_feedback
        if mobility.status != MobilityFeedback.STATUS_PROCESSING:
            self.error = MobilityFeedback.Status.Name(mobility.status)
            return FAILURE
        if self.kind == "stand":
            done = mobility.stand_feedback.status == \
                basic_command_pb2.StandCommand.Feedback.STATUS_IS_STANDING
        elif self.kind == "sit":
            done = mobility.sit_feedback.status == \
                basic_command_pb2.SitCommand.Feedback.STATUS_IS_SITTING
        elif self.kind == "trajectory":
            done = mobility.se2_trajectory_feedback.status == \
                basic_command_pb2.SE2TrajectoryCommand.Feedback.STATUS_AT_GOAL
        elif self.kind == "velocity":
            done = False  # runs until halted (wrap it in ForDuration)
        else:
            done = True
        return SUCCESS if done else RUNNING

    def halt(self, ctx):
        if self.running and self.kind in ("velocity", "trajectory") and self.command_id:
            ctx.robot.stop_if_active(self.command_id, ctx.lease("body"))
        super().halt(ctx)

    def finish(self, ctx):
        self.command_id = 0


class Dock(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.Dock):
        super().__init__(node_id, name, parameters)
        self.spec, self.command_id, self.scope = spec, 0, {}

    def _dock_id(self, ctx) -> int:
        if self.spec.WhichOneof("id") == "docking_station_id_blackboard_key":
            value = ctx.blackboard.read(self.spec.docking_station_id_blackboard_key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise MissionNodeError("dock id in the blackboard is not an integer")
            return value
        return self.spec.docking_station_id

    def update(self, ctx):
        if self.command_id == 0:
            response = ctx.robot.docking_command(
                self._dock_id(ctx), self.spec.prep_pose_behavior, ctx.pause_ns,
                ctx.lease("body"))
            if self.spec.command_status_name:
                ctx.blackboard.write(self.spec.command_status_name, response.status)
            if response.status != docking_pb2.DockingCommandResponse.STATUS_OK:
                raise MissionNodeError("docking refused: " + docking_pb2.DockingCommandResponse
                                       .Status.Name(response.status))
            self.command_id = response.docking_command_id
        status = ctx.robot.docking_feedback(self.command_id, ctx.pause_ns)
        if self.spec.feedback_status_name:
            ctx.blackboard.write(self.spec.feedback_status_name, status)
        if status == DockFeedback.STATUS_IN_PROGRESS:
            return RUNNING
        at_prep = self.spec.prep_pose_behavior in (docking_pb2.PREP_POSE_ONLY_POSE,
                                                   docking_pb2.PREP_POSE_UNDOCK)
        wanted = DockFeedback.STATUS_AT_PREP_POSE if at_prep else DockFeedback.STATUS_DOCKED
        if status != wanted:
            self.error = DockFeedback.Status.Name(status)
            return FAILURE
        return SUCCESS

    def halt(self, ctx):
        if self.running and self.command_id:
            ctx.robot.cancel_docking(self.command_id, ctx.lease("body"))
        super().halt(ctx)

    def finish(self, ctx):
        self.command_id = 0


class BosdynDockState(Node):
    def __init__(self, node_id, name, parameters, child, state_name):
        super().__init__(node_id, name, parameters)
        self.child, self.state_name, self.scope = child, state_name, {}

    def children(self):
        return [self.child] if self.child is not None else []

    def update(self, ctx):
        self.scope[self.state_name or "dock_state"] = ctx.robot.docking_state()
        if self.child is None:
            return SUCCESS
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)


def _check_lease(use) -> None:
    if use.status != use.STATUS_OK:
        raise MissionNodeError(f"lease error: {use.Status.Name(use.status)}")


# ----------------------------------------------------------------------- leaves
class BosdynRobotState(Node):
    """Puts the robot's state in the blackboard (``state_name``) for its child."""

    def __init__(self, node_id, name, parameters, child, state_name: str):
        super().__init__(node_id, name, parameters)
        self.child, self.state_name, self.scope = child, state_name or "state", {}

    def children(self):
        return [self.child] if self.child is not None else []

    def update(self, ctx):
        self.scope[self.state_name] = ctx.robot.robot_state()
        if self.child is None:
            return SUCCESS
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)


class ClearBehaviorFaults(Node):
    """Success when there is no behavior fault or all were cleared; failure when one is not
    clearable. Counts of cleared faults by cause go to the named blackboard variables."""

    _CAUSES = {robot_state_pb2.BehaviorFault.CAUSE_FALL: "cleared_cause_fall_blackboard_name",
               robot_state_pb2.BehaviorFault.CAUSE_HARDWARE:
                   "cleared_cause_hardware_blackboard_name",
               robot_state_pb2.BehaviorFault.CAUSE_LEASE_TIMEOUT:
                   "cleared_cause_lease_timeout_blackboard_name"}

    def __init__(self, node_id, name, parameters, spec):
        super().__init__(node_id, name, parameters)
        self.spec = spec

    def update(self, ctx):
        if self.spec.robot_state_blackboard_name:
            state = ctx.blackboard.read(self.spec.robot_state_blackboard_name)
        else:
            state = ctx.robot.robot_state()
        faults = list(state.behavior_fault_state.faults)
        counts = dict.fromkeys(self._CAUSES, 0)
        result = SUCCESS
        for fault in faults:
            if fault.status != robot_state_pb2.BehaviorFault.STATUS_CLEARABLE or \
                    not ctx.robot.clear_behavior_fault(fault.behavior_fault_id, ctx.lease("body")):
                result = FAILURE
                continue
            if fault.cause in counts:
                counts[fault.cause] += 1
        for cause, field_name in self._CAUSES.items():
            if getattr(self.spec, field_name):
                ctx.blackboard.write(getattr(self.spec, field_name), counts[cause])
        return result
