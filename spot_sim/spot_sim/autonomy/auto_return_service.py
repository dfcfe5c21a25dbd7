"""auto-return: Configure, GetConfiguration and Start. On comms loss (the body lease gone
stale while the robot stands powered, with leases configured) or when started, the robot
walks back to a place on its recent path (``spot_sim.autonomy.auto_return``) with the configured
lease, within ``max_displacement`` and ``max_duration``."""

import math

from bosdyn.api import lease_pb2
from bosdyn.api.auto_return import auto_return_pb2 as pb
from bosdyn.api.auto_return import auto_return_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2

from spot_sim.autonomy.auto_return import Breadcrumbs
from spot_sim.body import mobility
from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import DOMAIN, OrderedLock
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec

DEFAULT_DURATION_S = 600.0  # a return with no max_duration gives up after this [ours]
_INVALID = CommonError.CODE_INVALID_REQUEST


def invalid_params(params: pb.Params) -> pb.Params | None:
    """The settings of ``params`` the robot refuses (None: all valid)."""
    bad, invalid = pb.Params(), False
    if not math.isfinite(params.max_displacement) or params.max_displacement <= 0:
        bad.max_displacement, invalid = params.max_displacement, True
    if params.HasField("max_duration") and (params.max_duration.seconds < 0
                                            or params.max_duration.nanos < 0):
        bad.max_duration.CopyFrom(params.max_duration)
        invalid = True
    if params.mobility_params.type_url and not params.mobility_params.Unpack(
            spot_command_pb2.MobilityParams()):
        bad.mobility_params.CopyFrom(params.mobility_params)
        invalid = True
    return bad if invalid else None


class AutoReturnServicer(auto_return_service_pb2_grpc.AutoReturnServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock
        self.path = Breadcrumbs()
        self.configuration: pb.ConfigureRequest | None = None
        self.returning: tuple[int, mobility.Se2] | None = None  # a return: command id, goal
        self._triggered = False  # comms loss already acted on (until the lease is used)
        # the path, the configuration and the return; taken before the robot's
        self._lock = OrderedLock("auto_return", DOMAIN)
        robot.add_step_hook(self.step)

    @unary(pb.ConfigureResponse)
    def Configure(self, request, response, context):
        bad = invalid_params(request.params)
        if bad is not None:
            response.status = response.STATUS_INVALID_PARAMS
            response.invalid_params.CopyFrom(bad)
            return
        with self._lock:
            self.configuration = pb.ConfigureRequest()
            self.configuration.CopyFrom(request)
            self.configuration.ClearField("header")
            if request.clear_buffer:
                self.path.clear()
        response.status = response.STATUS_OK

    @unary(pb.GetConfigurationResponse)
    def GetConfiguration(self, request, response, context):
        with self._lock:
            if self.configuration is not None:
                response.request.CopyFrom(self.configuration)
                response.enabled = bool(self.configuration.leases)

    @unary(pb.StartResponse)
    def Start(self, request, response, context):
        with self._lock:
            configured = self.configuration or pb.ConfigureRequest()
        leases = request.leases or configured.leases
        params = request.params if request.HasField("params") else (
            configured.params if configured.HasField("params") else None)
        if not leases or params is None:
            set_error(response, _INVALID, "no leases or params: give them here or configure "
                      "auto-return first")
            return
        bad = invalid_params(params)
        if bad is not None:
            response.status = response.STATUS_INVALID_PARAMS
            response.invalid_params.CopyFrom(bad)
            return
        refusal = self.begin(leases, params)
        if refusal:
            set_error(response, _INVALID, refusal)
            return
        response.status = response.STATUS_OK

    def begin(self, leases, params: pb.Params) -> str:
        """Walk back now with ``leases`` and ``params``; a refusal sentence, or ""."""
        robot = self.robot
        body_lease = next((lease for lease in leases if lease.resource == "body"), None)
        if body_lease is None:
            return "auto-return needs a body lease"
        use = robot.leases.use(body_lease)
        if use.status != use.STATUS_OK:
            return ("the lease is not valid: "
                    f"{lease_pb2.LeaseUseResult.Status.Name(use.status)}")
        with self._lock:
            planned = self.path.return_goal(robot.odom_body(), params.max_displacement)
            if planned is None:
                return ""  # nowhere to go back to: the robot stays
            refusal = robot.motion_refusal()
            if refusal:
                return refusal
            goal, kept = planned
            duration = params.max_duration.ToNanoseconds() if params.HasField(
                "max_duration") else int(DEFAULT_DURATION_S * 1e9)
            command = robot.new_command("trajectory", goal=goal,
                                        end_ns=self.clock.now_nsec() + duration)
            self.returning = (command, goal)
            self.path.walked_back_to(goal, kept)
        return ""

    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Each physics tick: drop crumbs while walking (not while returning), and return on
        comms loss."""
        with self._lock:
            if self.returning is not None and (
                    not robot.command_active(self.returning[0])
                    or mobility.goal_reached(robot.odom_body(), self.returning[1])):
                self.returning = None
            if self.returning is None:
                self.path.record(robot.odom_body())
            configured = self.configuration
        if configured is None or not configured.leases:
            return
        stale = self._body_lease_stale()
        if stale and not self._triggered and robot.powered and robot.standing:
            self._triggered = True
            self.begin(configured.leases, configured.params)
        elif not stale:
            self._triggered = False

    def _body_lease_stale(self) -> bool:
        """Whether the body's legs (the ``mobility`` lease under ``body``) have gone stale."""
        return any(resource.resource in ("body", "mobility") and resource.is_stale
                   for resource in self.robot.leases.list_resources())


def spec() -> ServiceSpec:
    return ServiceSpec("auto-return", "bosdyn.api.auto_return.AutoReturnService",
                       "api.spot.robot",
                       auto_return_service_pb2_grpc.add_AutoReturnServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: AutoReturnServicer(parts.robot)),)
