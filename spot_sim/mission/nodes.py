"""Behavior-tree nodes of the mission service and their compilation from protos.

Each node is ticked by its parent and answers RUNNING, SUCCESS, FAILURE or ERROR. A node that
was not RUNNING on its previous tick starts afresh (``start``); ``halt`` stops a running
node and whatever it commands on the robot (pause, stop, or a parent moving on).

Times are mission execution time (``ctx.mission_ns``), which stands still while the mission
is paused. Robot commands that need an end time get the mission's pause time, so a mission
whose client stops renewing it leaves the robot standing still.
"""

import operator

from bosdyn.api import basic_command_pb2, power_pb2, robot_command_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import nodes_pb2, util_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2

from spot_sim.mission.blackboard import BlackboardError, evaluate, from_constant

RUNNING, SUCCESS = util_pb2.RESULT_RUNNING, util_pb2.RESULT_SUCCESS
FAILURE, ERROR = util_pb2.RESULT_FAILURE, util_pb2.RESULT_ERROR
_COMPARE = {
    nodes_pb2.Condition.COMPARE_EQ: operator.eq, nodes_pb2.Condition.COMPARE_NE: operator.ne,
    nodes_pb2.Condition.COMPARE_LT: operator.lt, nodes_pb2.Condition.COMPARE_GT: operator.gt,
    nodes_pb2.Condition.COMPARE_LE: operator.le, nodes_pb2.Condition.COMPARE_GE: operator.ge,
}
MobilityFeedback = basic_command_pb2.RobotCommandFeedbackStatus
DockFeedback = docking_pb2.DockingCommandFeedbackResponse


class MissionNodeError(Exception):
    """A node cannot run (a robot service refused, a variable is missing): result ERROR."""


class Node:
    """Base of every node: the start/tick/halt protocol and the state history record."""

    def __init__(self, node_id: int, name: str, parameters: dict) -> None:
        self.id, self.name, self.parameters = node_id, name, parameters
        self.running = False
        self.error = ""

    def tick(self, ctx) -> int:
        try:
            if not self.running:
                self.error = ""
                self.start(ctx)
            result = self.update(ctx)
        except (MissionNodeError, BlackboardError) as exc:
            self.error, result = str(exc), ERROR
        self.running = result == RUNNING
        if not self.running:
            self.finish(ctx)
        ctx.record(self, result)
        return result

    def halt(self, ctx) -> None:
        """Stop this node (and its children) mid-run."""
        if self.running:
            self.running = False
            self.finish(ctx)
            for child in self.children():
                child.halt(ctx)

    def children(self) -> list["Node"]:
        return []

    def forget(self) -> None:
        """Drop what a halted run would resume from, here and below (RestartWhenPaused)."""
        for child in self.children():
            if child is not None:
                child.forget()

    def start(self, ctx) -> None:
        """Called on the first tick of a run."""

    def update(self, ctx) -> int:
        raise NotImplementedError

    def finish(self, ctx) -> None:
        """Called when a run ends (result or halt): release what the run holds."""


# ----------------------------------------------------------------------- composites
class Sequence(Node):
    """Ticks its children in order while they succeed (a Selector: while they fail)."""

    MOVE_ON = SUCCESS  # the child result that moves to the next child; also the final result

    def __init__(self, node_id, name, parameters, kids, always_restart):
        super().__init__(node_id, name, parameters)
        self.kids, self.always_restart, self.index = kids, always_restart, 0

    def children(self):
        return self.kids

    def start(self, ctx):
        self.index = 0

    def update(self, ctx):
        if self.always_restart:
            self.index = 0
        while self.index < len(self.kids):
            result = self.kids[self.index].tick(ctx)
            if result != self.MOVE_ON:
                if result != RUNNING:
                    self.index = 0
                return result
            self.index += 1
        self.index = 0
        return self.MOVE_ON


class Selector(Sequence):
    MOVE_ON = FAILURE


class Repeat(Node):
    def __init__(self, node_id, name, parameters, child, spec: nodes_pb2.Repeat):
        super().__init__(node_id, name, parameters)
        self.child, self.spec, self.starts, self.scope = child, spec, 0, {}

    def children(self):
        return [self.child]

    def start(self, ctx):
        self.starts = 0

    def update(self, ctx):
        """One start per tick at most, so a huge ``max_starts`` cannot stall the tick."""
        counter = self.spec.start_counter_state_name
        if counter:
            self.scope[counter] = self.starts
        with ctx.blackboard.scope(self.scope):
            result = self.child.tick(ctx)
        if result == RUNNING or result == ERROR:
            return result
        if result == FAILURE and self.spec.respect_child_failure:
            return FAILURE
        self.starts += 1
        done = 0 < self.spec.max_starts <= self.starts
        return SUCCESS if done else RUNNING


class Retry(Node):
    def __init__(self, node_id, name, parameters, child, spec: nodes_pb2.Retry):
        super().__init__(node_id, name, parameters)
        self.child, self.spec, self.attempts, self.scope = child, spec, 0, {}

    def children(self):
        return [self.child]

    def start(self, ctx):
        self.attempts = 0

    def update(self, ctx):
        """One attempt per tick at most."""
        counter = self.spec.attempt_counter_state_name
        if counter:
            self.scope[counter] = self.attempts
        with ctx.blackboard.scope(self.scope):
            result = self.child.tick(ctx)
        if result != FAILURE:
            return result
        self.attempts += 1
        return FAILURE if self.attempts >= self.spec.max_attempts else RUNNING


class ForDuration(Node):
    def __init__(self, node_id, name, parameters, child, timeout_child, spec):
        super().__init__(node_id, name, parameters)
        self.child, self.timeout_child, self.spec = child, timeout_child, spec
        self.start_ns, self.timed_out, self.scope = 0, False, {}

    def children(self):
        return [c for c in (self.child, self.timeout_child) if c is not None]

    def start(self, ctx):
        self.start_ns, self.timed_out = ctx.mission_ns, False

    def _duration_ns(self, ctx) -> int:
        if self.spec.WhichOneof("duration_type") == "duration_name_in_blackboard":
            seconds = ctx.blackboard.read(self.spec.duration_name_in_blackboard)
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise MissionNodeError("ForDuration duration in the blackboard is not a number")
            return int(seconds * 1e9)
        d = self.spec.duration
        return d.seconds * 1_000_000_000 + d.nanos

    def update(self, ctx):
        if not self.timed_out:
            remaining = self._duration_ns(ctx) - (ctx.mission_ns - self.start_ns)
            if self.spec.time_remaining_name:
                self.scope[self.spec.time_remaining_name] = max(remaining, 0) / 1e9
            if remaining > 0:
                with ctx.blackboard.scope(self.scope):
                    return self.child.tick(ctx)
            self.child.halt(ctx)
            self.timed_out = True
        if self.timeout_child is None:
            return FAILURE
        return self.timeout_child.tick(ctx)


class SimpleParallel(Node):
    def __init__(self, node_id, name, parameters, primary, secondary, spec):
        super().__init__(node_id, name, parameters)
        self.primary, self.secondary, self.spec = primary, secondary, spec
        self.secondary_done = False

    def children(self):
        return [self.primary, self.secondary]

    def start(self, ctx):
        self.secondary_done = False

    def _tick_secondary(self, ctx):
        if self.secondary_done:
            return
        result = self.secondary.tick(ctx)
        if result != RUNNING and self.spec.run_secondary_node_once:
            self.secondary_done = True

    def update(self, ctx):
        if self.spec.tick_secondary_node_first:
            self._tick_secondary(ctx)
        result = self.primary.tick(ctx)
        if result != RUNNING:
            self.secondary.halt(ctx)
            return result
        if not self.spec.tick_secondary_node_first:
            self._tick_secondary(ctx)
        return RUNNING


class DefineBlackboard(Node):
    def __init__(self, node_id, name, parameters, child, variables):
        super().__init__(node_id, name, parameters)
        self.child, self.variables, self.scope = child, variables, {}

    def children(self):
        return [self.child]

    def start(self, ctx):
        self.scope = {}
        for kv in self.variables:
            self.scope[kv.key] = evaluate(kv.value, ctx.blackboard, self.parameters)

    def update(self, ctx):
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)


# ----------------------------------------------------------------------- leaves
class ConstantResult(Node):
    def __init__(self, node_id, name, parameters, result):
        super().__init__(node_id, name, parameters)
        self.result = result

    def update(self, ctx):
        return self.result


class SetBlackboard(Node):
    def __init__(self, node_id, name, parameters, variables):
        super().__init__(node_id, name, parameters)
        self.variables = variables

    def update(self, ctx):
        values = [(kv.key, evaluate(kv.value, ctx.blackboard, self.parameters))
                  for kv in self.variables]  # evaluate all first: nothing changes on an error
        for key, value in values:
            ctx.blackboard.write(key, value)
        return SUCCESS


class Condition(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.Condition):
        super().__init__(node_id, name, parameters)
        self.spec = spec

    def _operand(self, operand, ctx):
        if operand.WhichOneof("type") == "var":
            return ctx.blackboard.read(operand.var.name)
        return from_constant(operand.const)

    def update(self, ctx):
        lhs, rhs = self._operand(self.spec.lhs, ctx), self._operand(self.spec.rhs, ctx)
        try:
            return SUCCESS if _COMPARE[self.spec.operation](lhs, rhs) else FAILURE
        except TypeError as exc:
            raise MissionNodeError(f"cannot compare {lhs!r} with {rhs!r}") from exc


class Sleep(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.Sleep):
        super().__init__(node_id, name, parameters)
        self.spec, self.start_ns, self.elapsed_before_halt = spec, 0, None

    def start(self, ctx):
        if self.elapsed_before_halt is not None and not self.spec.restart_after_stop:
            self.start_ns = ctx.mission_ns - self.elapsed_before_halt  # resume the timer
        else:
            self.start_ns = ctx.mission_ns
        self.elapsed_before_halt = None

    def halt(self, ctx):
        if self.running:
            self.elapsed_before_halt = ctx.mission_ns - self.start_ns
        super().halt(ctx)

    def forget(self):
        self.elapsed_before_halt = None

    def update(self, ctx):
        if self.spec.WhichOneof("duration") == "duration_name_in_blackboard":
            seconds = ctx.blackboard.read(self.spec.duration_name_in_blackboard)
        else:
            seconds = self.spec.seconds
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise MissionNodeError("Sleep duration is not a number")
        return SUCCESS if ctx.mission_ns - self.start_ns >= seconds * 1e9 else RUNNING


class Prompt(Node):
    def __init__(self, node_id, name, parameters, child, spec: nodes_pb2.Prompt):
        super().__init__(node_id, name, parameters)
        self.child, self.spec = child, spec
        self.question_id, self.answer, self.scope = 0, None, {}

    def children(self):
        return [self.child] if self.child is not None else []

    def options(self) -> list[nodes_pb2.Prompt.Option]:
        if self.spec.WhichOneof("answer_spec") == "options_list":
            return list(self.spec.options_list.options)
        return list(self.spec.options)

    def start(self, ctx):
        if self.spec.always_reprompt or self.answer is None:
            self.answer = None
            self.question_id = ctx.ask(self)

    def update(self, ctx):
        if self.answer is None:
            self.answer = ctx.answer_for(self.question_id)
            if self.answer is None:
                return RUNNING
        if self.spec.source:
            self.scope[self.spec.source] = self.answer
        if self.child is None:
            return SUCCESS
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)

    def finish(self, ctx):
        if self.answer is None:
            ctx.withdraw(self.question_id)


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
