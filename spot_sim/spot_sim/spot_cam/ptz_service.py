"""spot-cam-ptz: the Spot CAM's pan-tilt-zoom heads (``spot_sim.spot_cam.ptz``) as the SDK's
``PtzClient`` and the Spot CAM command-line program drive them."""

import math

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import ptz_pb2, service_pb2_grpc

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.power import PowerRails
from spot_sim.spot_cam.ptz import Pose, PtzError, PtzHeads

_INVALID = CommonError.CODE_INVALID_REQUEST
Focus = ptz_pb2.PtzFocusState


def _describe(out: ptz_pb2.PtzDescription, head) -> None:
    out.name = head.name
    for axis in ("pan", "tilt", "zoom"):
        low, high = getattr(head, axis)
        limits = getattr(out, f"{axis}_limit")
        limits.min.value, limits.max.value = low, high


def _fill(out, name: str, pose: Pose) -> None:
    out.ptz.name = name
    out.pan.value, out.tilt.value, out.zoom.value = pose.pan, pose.tilt, pose.zoom


class PtzServicer(service_pb2_grpc.PtzServiceServicer):
    def __init__(self, clock, rails: PowerRails, heads: PtzHeads) -> None:
        self.clock, self.rails, self.heads = clock, rails, heads
        self._lock = OrderedLock("ptz focus", LEAF)  # the focus state
        self._focus = Focus(mode=Focus.PTZ_FOCUS_AUTO)

    @unary(ptz_pb2.ListPtzResponse)
    def ListPtz(self, request, response, context):
        for head in self.heads.heads.values():
            _describe(response.ptzs.add(), head)

    def _unpowered(self, name: str, response) -> bool:
        """Refuse a mechanical head's request while its power rail is off."""
        if name == "mech" and not self.rails.is_on("ptz", self.clock.now_nsec()):
            set_error(response, _INVALID, "the mechanical PTZ is powered off (spot-cam-power)")
            return True
        return False

    def _report(self, read, name: str, response, out) -> None:
        """Fill ``out`` with ``read(name, now)`` (a position or velocity), or refuse."""
        if self._unpowered(name, response):
            return
        try:
            pose = read(name, self.clock.now_nsec())
        except PtzError as refused:
            set_error(response, _INVALID, str(refused))
            return
        _fill(out, name, pose)

    @unary(ptz_pb2.GetPtzPositionResponse)
    def GetPtzPosition(self, request, response, context):
        self._report(self.heads.position, request.ptz.name, response, response.position)

    @unary(ptz_pb2.GetPtzVelocityResponse)
    def GetPtzVelocity(self, request, response, context):
        self._report(self.heads.velocity, request.ptz.name, response, response.velocity)

    @unary(ptz_pb2.SetPtzPositionResponse)
    def SetPtzPosition(self, request, response, context):
        position = request.position
        name = position.ptz.name
        if self._unpowered(name, response):
            return
        try:
            here = self.heads.position(name, self.clock.now_nsec())
            target = Pose(*(getattr(position, axis).value if position.HasField(axis)
                            else getattr(here, axis) for axis in ("pan", "tilt", "zoom")))
            self.heads.set_position(name, target, self.clock.now_nsec())
        except PtzError as refused:
            set_error(response, _INVALID, str(refused))
            return
        _fill(response.position, name, target)

    @unary(ptz_pb2.SetPtzVelocityResponse)
    def SetPtzVelocity(self, request, response, context):
        velocity = request.velocity
        rates = Pose(velocity.pan.value, velocity.tilt.value, velocity.zoom.value)
        try:
            self.heads.set_velocity(velocity.ptz.name, rates, self.clock.now_nsec())
        except PtzError as refused:
            set_error(response, _INVALID, str(refused))
            return
        _fill(response.velocity, velocity.ptz.name, rates)

    @unary(ptz_pb2.InitializeLensResponse)
    def InitializeLens(self, request, response, context):
        self.heads.initialize_lens()

    @unary(ptz_pb2.GetPtzFocusStateResponse)
    def GetPtzFocusState(self, request, response, context):
        with self._lock:
            response.focus_state.CopyFrom(self._focus)

    @unary(ptz_pb2.SetPtzFocusStateResponse)
    def SetPtzFocusState(self, request, response, context):
        focus = request.focus_state
        if focus.mode not in (Focus.PTZ_FOCUS_AUTO, Focus.PTZ_FOCUS_MANUAL):
            set_error(response, _INVALID, "focus mode must be PTZ_FOCUS_AUTO or PTZ_FOCUS_MANUAL")
            return
        if focus.mode == Focus.PTZ_FOCUS_MANUAL and focus.HasField("approx_distance"):
            distance = focus.approx_distance.value
            if not (math.isfinite(distance) and 0.0 < distance <= 1000.0):
                set_error(response, _INVALID, f"focus distance {distance} m is not a distance")
                return
            focus = Focus(mode=focus.mode, approx_distance=focus.approx_distance)
        with self._lock:
            self._focus = Focus()
            self._focus.CopyFrom(focus)


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-ptz", "bosdyn.api.spot_cam.PtzService", "api.spot.robot",
                       service_pb2_grpc.add_PtzServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: PtzServicer(
    parts.clock, parts.spot_cam.rails, parts.spot_cam.heads), hardware="spot_cam"),)
