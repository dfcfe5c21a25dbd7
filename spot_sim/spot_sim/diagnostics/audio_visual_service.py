"""audio-visual (`--audio-visual`): the lights and buzzer system's settings and behaviours
(``spot_sim.diagnostics.audio_visual``). A behaviour's client is the caller's ``client_name``."""

from bosdyn.api import audio_visual_pb2 as av
from bosdyn.api import audio_visual_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.diagnostics.audio_visual import AudioVisual


class AudioVisualServicer(audio_visual_service_pb2_grpc.AudioVisualServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.clock = robot.clock
        self.system = AudioVisual()

    @unary(av.RunBehaviorResponse)
    def RunBehavior(self, request, response, context):
        response.status, response.run_result = self.system.run(
            request.name, request.header.client_name, timestamp_to_nsec(request.end_time),
            self.clock.now_nsec(), request.restart)

    @unary(av.StopBehaviorResponse)
    def StopBehavior(self, request, response, context):
        response.status = self.system.stop(request.behavior_name, request.header.client_name)

    @unary(av.AddOrModifyBehaviorResponse)
    def AddOrModifyBehavior(self, request, response, context):
        response.status, response.error_message = self.system.add_or_modify(
            request.name, request.behavior)
        if response.status == response.STATUS_SUCCESS:
            response.live_behavior.CopyFrom(av.LiveAudioVisualBehavior(
                name=request.name, behavior=request.behavior))

    @unary(av.DeleteBehaviorsResponse)
    def DeleteBehaviors(self, request, response, context):
        response.status, deleted = self.system.delete(list(request.behavior_names))
        response.deleted_behaviors.extend(deleted)

    @unary(av.ListBehaviorsResponse)
    def ListBehaviors(self, request, response, context):
        response.behaviors.extend(self.system.live())

    @unary(av.GetSystemParamsResponse)
    def GetSystemParams(self, request, response, context):
        response.params.CopyFrom(self.system.params)

    @unary(av.SetSystemParamsResponse)
    def SetSystemParams(self, request, response, context):
        refusal = self.system.set_params(request)
        if refusal:
            set_error(response, CommonError.CODE_INVALID_REQUEST, refusal)


def spec() -> ServiceSpec:
    return ServiceSpec("audio-visual", "bosdyn.api.AudioVisualService", "api.spot.robot",
                       audio_visual_service_pb2_grpc.add_AudioVisualServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: AudioVisualServicer(parts.robot),
                   hardware="audio_visual"),)
