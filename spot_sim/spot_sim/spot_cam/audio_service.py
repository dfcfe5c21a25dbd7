"""spot-cam-audio: the Spot CAM's speaker and microphones (``spot_sim.spot_cam.audio``) as
the SDK's ``AudioClient`` and the Spot CAM program's ``audio`` commands use them."""

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import audio_pb2, service_pb2_grpc

from spot_sim.core.rpc import set_error, stamped, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.audio import AudioError, Speaker

_INVALID = CommonError.CODE_INVALID_REQUEST


def _refusing(response, action) -> None:
    """Run ``action()``; an AudioError becomes the response's INVALID_REQUEST."""
    try:
        action()
    except AudioError as refused:
        set_error(response, _INVALID, str(refused))


class AudioServicer(service_pb2_grpc.AudioServiceServicer):
    def __init__(self, clock, speaker: Speaker) -> None:
        self.clock, self.speaker = clock, speaker

    @unary(audio_pb2.ListSoundsResponse)
    def ListSounds(self, request, response, context):
        response.sounds.extend(audio_pb2.Sound(name=name) for name in self.speaker.names())

    @unary(audio_pb2.SetVolumeResponse)
    def SetVolume(self, request, response, context):
        _refusing(response, lambda: self.speaker.set_volume(request.volume))

    @unary(audio_pb2.GetVolumeResponse)
    def GetVolume(self, request, response, context):
        response.volume = self.speaker.volume()

    @unary(audio_pb2.PlaySoundResponse)
    def PlaySound(self, request, response, context):
        gain = request.gain.value if request.HasField("gain") else 1.0
        _refusing(response, lambda: self.speaker.play(request.sound.name, gain,
                                                      self.clock.now_nsec()))

    @unary(audio_pb2.DeleteSoundResponse)
    def DeleteSound(self, request, response, context):
        _refusing(response, lambda: self.speaker.delete(request.sound.name))

    def LoadSound(self, request_iterator, context):
        requests = list(request_iterator)
        first = requests[0] if requests else audio_pb2.LoadSoundRequest()
        response = stamped(self.clock, audio_pb2.LoadSoundResponse(), first.header)
        data = b"".join(request.data.data for request in requests)
        _refusing(response, lambda: self.speaker.load(first.sound.name, data))
        return response

    @unary(audio_pb2.SetAudioCaptureChannelResponse)
    def SetAudioCaptureChannel(self, request, response, context):
        _refusing(response, lambda: self.speaker.set_channel(request.channel))

    @unary(audio_pb2.GetAudioCaptureChannelResponse)
    def GetAudioCaptureChannel(self, request, response, context):
        response.channel = self.speaker.channel()

    @unary(audio_pb2.SetAudioCaptureGainResponse)
    def SetAudioCaptureGain(self, request, response, context):
        _refusing(response, lambda: self.speaker.set_gain(request.channel, request.gain))

    @unary(audio_pb2.GetAudioCaptureGainResponse)
    def GetAudioCaptureGain(self, request, response, context):
        def read():
            response.gain = self.speaker.gain(request.channel)
        _refusing(response, read)


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-audio", "bosdyn.api.spot_cam.AudioService", "api.spot.robot",
                       service_pb2_grpc.add_AudioServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: AudioServicer(parts.clock, parts.spot_cam.speaker),
                   hardware="spot_cam"),)
