"""spot-cam-compositor: the Spot CAM's screen layouts, IR colour map and IR meter overlay
(``spot_sim.spot_cam.compositor``) as the SDK's ``CompositorClient`` uses them."""

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import compositor_pb2, service_pb2_grpc

from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.cameras import CAMERAS
from spot_sim.spot_cam.compositor import SCREENS, Compositor, CompositorError
from spot_sim.spot_cam.ptz import PtzHeads


def _refusing(response, action) -> None:
    try:
        action()
    except CompositorError as refused:
        set_error(response, CommonError.CODE_INVALID_REQUEST, str(refused))


class CompositorServicer(service_pb2_grpc.CompositorServiceServicer):
    def __init__(self, clock, heads: PtzHeads, compositor: Compositor) -> None:
        self.clock, self.heads, self.compositor = clock, heads, compositor

    @unary(compositor_pb2.ListScreensResponse)
    def ListScreens(self, request, response, context):
        response.screens.extend(compositor_pb2.ScreenDescription(name=n) for n in SCREENS)

    @unary(compositor_pb2.GetScreenResponse)
    def GetScreen(self, request, response, context):
        response.name = self.compositor.screen()

    @unary(compositor_pb2.SetScreenResponse)
    def SetScreen(self, request, response, context):
        _refusing(response, lambda: self.compositor.set_screen(request.name))
        response.name = self.compositor.screen()

    @unary(compositor_pb2.GetVisibleCamerasResponse)
    def GetVisibleCameras(self, request, response, context):
        zoom = self.heads.position("mech", self.clock.now_nsec()).zoom
        for name, (x, y, width, height) in self.compositor.visible():
            stream = response.streams.add()
            stream.window.xoffset, stream.window.yoffset = x, y
            stream.window.width, stream.window.height = width, height
            stream.camera.CopyFrom(CAMERAS[name].to_proto(zoom if name == "ptz" else 1.0))

    @unary(compositor_pb2.SetIrColormapResponse)
    def SetIrColormap(self, request, response, context):
        _refusing(response, lambda: self.compositor.set_colormap(request.map))

    @unary(compositor_pb2.GetIrColormapResponse)
    def GetIrColormap(self, request, response, context):
        response.map.CopyFrom(self.compositor.colormap())

    @unary(compositor_pb2.SetIrMeterOverlayResponse)
    def SetIrMeterOverlay(self, request, response, context):
        _refusing(response, lambda: self.compositor.set_overlay(request.overlay))

    @unary(compositor_pb2.GetIrMeterOverlayResponse)
    def GetIrMeterOverlay(self, request, response, context):
        response.overlay.CopyFrom(self.compositor.overlay())


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-compositor", "bosdyn.api.spot_cam.CompositorService",
                       "api.spot.robot",
                       service_pb2_grpc.add_CompositorServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: CompositorServicer(
    parts.clock, parts.spot_cam.heads, parts.spot_cam.compositor), hardware="spot_cam"),)
