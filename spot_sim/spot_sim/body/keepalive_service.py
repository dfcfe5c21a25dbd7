"""keepalive: clients install policies ("if I have not checked in for N s, do X") and check
in; a watcher thread carries out each action once its time has passed: halt (stop), controlled
motors off (sit, then cut power), immediate motors off / robot off (cut power), lease stale,
record an event in the data buffer. Auto-return is refused (not simulated)."""

import itertools
import threading
import time
from collections.abc import Callable

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.keepalive import keepalive_pb2 as pb
from bosdyn.api.keepalive import keepalive_service_pb2_grpc

from spot_sim.body.power import Power
from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import SERVICE, OrderedLock
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec

CHECK_PERIOD_SEC = 0.05
Action = pb.GetStatusResponse


class _Live:
    def __init__(self, policy_id: int, policy: pb.Policy, client_name: str) -> None:
        self.id, self.policy, self.client_name = policy_id, policy, client_name
        self.checkin_ns = time.monotonic_ns()
        self.checkin_stamp = None
        self.fired: set[int] = set()  # indexes of actions already carried out


class KeepaliveServicer(keepalive_service_pb2_grpc.KeepaliveServiceServicer):
    def __init__(self, robot: SimRobot, record_event: Callable[[str, object], None]) -> None:
        """``record_event(source, event)`` keeps a policy's events (the data buffer's)."""
        self.robot, self.clock, self.record_event = robot, robot.clock, record_event
        self._lock = OrderedLock("keepalive", SERVICE)
        self._policies: dict[int, _Live] = {}
        self._ids = itertools.count(1)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.active_actions: set[int] = set()

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="spot-sim-keepalive",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def _live(self, live: _Live) -> pb.LivePolicy:
        out = pb.LivePolicy(policy_id=live.id, client_name=live.client_name)
        out.policy.CopyFrom(live.policy)
        out.last_checkin.CopyFrom(live.checkin_stamp or self.clock.timestamp())
        return out

    @unary(pb.ModifyPolicyResponse)
    def ModifyPolicy(self, request, response, context):
        with self._lock:
            unknown = [i for i in request.policy_ids_to_remove if i not in self._policies]
            if unknown:
                response.status = response.STATUS_INVALID_POLICY_ID
                return
            if request.HasField("to_add"):
                if any(a.HasField("auto_return") for a in request.to_add.actions):
                    set_error(response, CommonError.CODE_INVALID_REQUEST,
                              "auto_return is not simulated by this robot")
                    return
                for lease in request.to_add.associated_leases:
                    use = self.robot.leases.use(lease, allow_super=True)
                    if use.status != use.STATUS_OK:
                        response.status = response.STATUS_INVALID_LEASE
                        return
            for policy_id in request.policy_ids_to_remove:
                response.removed_policies.append(self._live(self._policies.pop(policy_id)))
            if request.HasField("to_add"):
                live = _Live(next(self._ids), request.to_add,
                             request.header.client_name)
                live.checkin_stamp = self.clock.timestamp()
                self._policies[live.id] = live
                response.added_policy.CopyFrom(self._live(live))
        response.status = response.STATUS_OK

    @unary(pb.CheckInResponse)
    def CheckIn(self, request, response, context):
        with self._lock:
            live = self._policies.get(request.policy_id)
            if live is None:
                response.status = response.STATUS_INVALID_POLICY_ID
                return
            live.checkin_ns, live.checkin_stamp = time.monotonic_ns(), self.clock.timestamp()
            live.fired.clear()
            response.last_checkin.CopyFrom(live.checkin_stamp)
        response.status = response.STATUS_OK

    @unary(pb.GetStatusResponse)
    def GetStatus(self, request, response, context):
        with self._lock:
            response.status.extend(self._live(live) for live in self._policies.values())
            response.active_control_actions.extend(sorted(self.active_actions))

    # ------------------------------------------------------------------ actions
    def _watch(self) -> None:
        while not self._stop.wait(CHECK_PERIOD_SEC):
            now = time.monotonic_ns()
            due = []
            with self._lock:
                for live in self._policies.values():
                    for index, action in enumerate(live.policy.actions):
                        after = action.after.seconds * 1_000_000_000 + action.after.nanos
                        if index not in live.fired and now - live.checkin_ns >= after:
                            live.fired.add(index)
                            due.append((live, action))
                if not any(live.fired for live in self._policies.values()):
                    self.active_actions.clear()
            for live, action in due:
                self._carry_out(live, action)

    def _carry_out(self, live: _Live, action: pb.ActionAfter) -> None:
        robot = self.robot
        which = action.WhichOneof("action")
        taken = None
        if which == "halt_robot":
            robot.new_command("stop")
            taken = Action.POLICY_CONTROL_ACTION_HALT
        elif which == "controlled_motors_off":
            with robot.parts(Power) as (power,):  # checked and commanded as one step
                if power.on:
                    robot.new_command("safe_power_off")
            taken = Action.POLICY_CONTROL_ACTION_MOTORS_OFF
        elif which in ("immediate_motors_off", "immediate_robot_off"):
            robot.request_power(False)
            taken = (Action.POLICY_CONTROL_ACTION_IMMEDIATE_MOTORS_OFF
                     if which == "immediate_motors_off" else Action.POLICY_CONTROL_ACTION_ROBOT_OFF)
        elif which == "lease_stale":
            for lease in action.lease_stale.leases or live.policy.associated_leases:
                robot.leases.mark_stale(lease.resource)
        if taken is not None:
            with self._lock:
                self.active_actions.add(taken)
        if which == "record_event":
            for event in action.record_event.events:
                self.record_event(event.source or "keepalive", event)


def spec() -> ServiceSpec:
    return ServiceSpec("keepalive", "bosdyn.api.keepalive.KeepaliveService", "api.spot.robot",
                       keepalive_service_pb2_grpc.add_KeepaliveServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: KeepaliveServicer(
    parts.robot, lambda source, event: parts.data.record("event", source, event))),)
