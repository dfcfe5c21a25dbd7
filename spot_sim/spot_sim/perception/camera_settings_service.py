"""gripper-camera-param and ir-enable-disable-service: the gripper camera's settings (which
change its images: ``spot_sim/perception/gripper_camera.py``) and the IR emitters' switch."""

from bosdyn.api import gripper_camera_param_pb2 as gripper
from bosdyn.api import (
    gripper_camera_param_service_pb2_grpc,
    ir_enable_disable_pb2,
    ir_enable_disable_service_pb2_grpc,
)
from bosdyn.api.header_pb2 import CommonError

from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.perception.gripper_camera import GripperCamera


class GripperCameraParamServicer(
        gripper_camera_param_service_pb2_grpc.GripperCameraParamServiceServicer):
    def __init__(self, camera: GripperCamera, clock) -> None:
        self.camera, self.clock = camera, clock

    @unary(gripper.GripperCameraParamResponse)
    def SetParams(self, request, response, context):
        problem = self.camera.set(request.params)
        if problem:
            set_error(response, CommonError.CODE_INVALID_REQUEST, problem)

    @unary(gripper.GripperCameraGetParamResponse)
    def GetParams(self, request, response, context):
        response.params.CopyFrom(self.camera.params())

    @unary(gripper.SetGripperCameraCalibrationResponse)
    def SetCamCalib(self, request, response, context):
        set_error(response, CommonError.CODE_INVALID_REQUEST,
                  "the gripper camera calibration is fixed on this robot")

    @unary(gripper.GetGripperCameraCalibrationResponse)
    def GetCamCalib(self, request, response, context):
        response.gripper_cam_cal.SetInParent()


class IREnableDisableServicer(ir_enable_disable_service_pb2_grpc.IREnableDisableServiceServicer):
    def __init__(self, clock) -> None:
        self.clock = clock
        self.ir_enabled = True

    @unary(ir_enable_disable_pb2.IREnableDisableResponse)
    def IREnableDisable(self, request, response, context):
        if request.request == request.REQUEST_UNKNOWN:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "request must be ON or OFF")
            return
        self.ir_enabled = request.request == request.REQUEST_ON


def gripper_spec() -> ServiceSpec:
    return ServiceSpec(
        "gripper-camera-param", "bosdyn.api.GripperCameraParamService", "api.spot.robot",
        gripper_camera_param_service_pb2_grpc.add_GripperCameraParamServiceServicer_to_server)


def ir_spec() -> ServiceSpec:
    return ServiceSpec(
        "ir-enable-disable-service", "bosdyn.api.IREnableDisableService", "api.spot.robot",
        ir_enable_disable_service_pb2_grpc.add_IREnableDisableServiceServicer_to_server)


SERVICES = (
    Served(ir_spec(), lambda parts: IREnableDisableServicer(parts.clock)),
    Served(gripper_spec(), lambda parts: GripperCameraParamServicer(parts.sensors.gripper_camera,
                                                      parts.clock),
           hardware="arm"),
)
