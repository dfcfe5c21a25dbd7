"""power: motor power on and off, with feedback; fan power commands (a percentage for a
duration, running until then or until a newer fan command takes over; the simulated robot's
temperature never stops them)."""


from bosdyn.api import power_pb2, power_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.rpc import LEASE, set_error, unary
from spot_sim.core.served import Served, ServiceSpec

_REQUEST = power_pb2.PowerCommandRequest
_MOTORS_ON = (_REQUEST.REQUEST_ON, _REQUEST.REQUEST_ON_MOTORS)
_MOTORS_OFF = (_REQUEST.REQUEST_OFF, _REQUEST.REQUEST_OFF_MOTORS)
FanFeedback = power_pb2.FanPowerCommandFeedbackResponse


class PowerServicer(power_service_pb2_grpc.PowerServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock
        self._fans: dict[int, list] = {}  # command id -> [end ns, overridden at ns or None]
        self._fan_lock = OrderedLock("fans", LEAF)

    @unary(power_pb2.PowerCommandResponse, LEASE)  # the client reports the lease_use_result
    def PowerCommand(self, request, response, context):
        if request.request not in _MOTORS_ON + _MOTORS_OFF:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "the simulated robot only switches motor power")
            return
        status, command_id = self.robot.request_power(request.request in _MOTORS_ON)
        response.status = status
        response.power_command_id = command_id

    @unary(power_pb2.PowerCommandFeedbackResponse)
    def PowerCommandFeedback(self, request, response, context):
        response.status = self.robot.power_feedback(request.power_command_id)

    @unary(power_pb2.ResetSafetyStopResponse, LEASE)
    def ResetSafetyStop(self, request, response, context):
        """Reset a safety-rated stop: only on a robot configured with the safety-rated stop
        function (SRSF); nothing here trips one, so a reset succeeds at once."""
        Request = power_pb2.ResetSafetyStopRequest
        if request.safety_stop_type not in (Request.SAFETY_STOP_PRIMARY,
                                            Request.SAFETY_STOP_REDUNDANT):
            response.status = response.STATUS_UNKNOWN_STOP_TYPE
        elif not self.robot.config.safety_rated_stop:
            response.status = response.STATUS_INCOMPATIBLE_HARDWARE_ERROR
        else:
            response.status = response.STATUS_OK

    @unary(power_pb2.FanPowerCommandResponse, LEASE)
    def FanPowerCommand(self, request, response, context):
        duration_ns = request.duration.ToNanoseconds()
        if not 0 <= request.percent_power <= 100 or duration_ns <= 0:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "percent_power must be within [0, 100] and duration positive")
            return
        now = self.clock.now_nsec()
        with self._fan_lock:
            for command in self._fans.values():
                if command[1] is None and command[0] > now:
                    command[1] = now  # a newer fan command takes over
            command_id = len(self._fans) + 1
            self._fans[command_id] = [now + duration_ns, None]
        response.status = response.STATUS_OK
        response.command_id = command_id
        response.desired_end_time.CopyFrom(self.clock.timestamp(now + duration_ns))

    @unary(power_pb2.FanPowerCommandFeedbackResponse)
    def FanPowerCommandFeedback(self, request, response, context):
        with self._fan_lock:
            command = self._fans.get(request.command_id)
        if command is None:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      f"unknown fan command id {request.command_id}")
            return
        end_ns, stopped_ns = command
        response.desired_end_time.CopyFrom(self.clock.timestamp(end_ns))
        if stopped_ns is not None:
            response.status = FanFeedback.STATUS_OVERRIDDEN_BY_COMMAND
            response.early_stop_time.CopyFrom(self.clock.timestamp(stopped_ns))
        elif self.clock.now_nsec() >= end_ns:
            response.status = FanFeedback.STATUS_COMPLETE
        else:
            response.status = FanFeedback.STATUS_RUNNING


def spec() -> ServiceSpec:
    return ServiceSpec("power", "bosdyn.api.PowerService", "api.spot.robot",
                       power_service_pb2_grpc.add_PowerServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: PowerServicer(parts.robot)),)
