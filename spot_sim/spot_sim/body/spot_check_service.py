"""spot-check: a plausible Spot Check run. Started with the lease while the robot sits, it
powers the motors on itself, steps through the check's stages with progress, reports every
body camera and load cell as OK and ends FINISHED (under a field profile a run can find a
camera out of calibration and a load cell out of range, as worn robots do); abort stops it
(USER_ABORTED). Started while standing it fails with ERROR_INIT_NOT_SITTING, while e-stopped with
ERROR_POWER_ON_FAILURE (in the feedback, as the robot reports them). Camera calibration (needs
motor power) runs the same way."""


from bosdyn.api.spot import spot_check_pb2 as pb
from bosdyn.api.spot import spot_check_service_pb2_grpc

from spot_sim.body.robot import SimRobot
from spot_sim.core.field import Draw, FieldProfile
from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec

Feedback = pb.SpotCheckFeedbackResponse
STAGES = (Feedback.STATE_STARTING, Feedback.STATE_LOADCELL_CAL, Feedback.STATE_ENDSTOP_CAL,
          Feedback.STATE_HIP_RANGE_OF_MOTION_CHECK, Feedback.STATE_CAMERA_CHECK,
          Feedback.STATE_BODY_POSING, Feedback.STATE_SIT_DOWN_AFTER_RUN)
STAGE_SEC = 0.4
CAMERAS = ("frontleft", "frontright", "left", "right", "back")
LOAD_CELLS = ("fl", "fr", "hl", "hr")
Calibration = pb.CameraCalibrationFeedbackResponse
CALIBRATION_SEC = 2.0


class SpotCheckServicer(spot_check_service_pb2_grpc.SpotCheckServiceServicer):
    def __init__(self, robot: SimRobot, profile: FieldProfile | None = None) -> None:
        self.robot, self.clock = robot, robot.clock
        self._profile = profile or FieldProfile()
        self._draw = Draw(self._profile, "spot_check")
        self._finding: tuple[str, str] | None = None  # (camera, load cell) the run flags
        self._lock = OrderedLock("spot check", LEAF)
        self._started_ns: int | None = None
        self._aborted = False
        self._last_command = pb.SpotCheckCommandRequest.COMMAND_UNKNOWN
        self._error = Feedback.ERROR_NONE
        self._calibration_started_ns: int | None = None
        self._calibration_canceled = False
        self._calibration_problem = ""

    def _refusal(self, request, response) -> str:
        use = self.robot.leases.use(request.lease)
        response.lease_use_result.CopyFrom(use)
        if use.status != use.STATUS_OK:
            return "the lease is not valid"
        if not self.robot.license.allows("spot_check"):
            return self.robot.license.refusal("spot_check")
        return ""

    @unary(pb.SpotCheckCommandResponse)
    def SpotCheckCommand(self, request, response, context):
        command = request.command
        problem = self._refusal(request, response)
        if not problem and command == request.COMMAND_UNKNOWN:
            problem = "unknown command"
        response.status = response.STATUS_ERROR if problem else response.STATUS_OK
        response.message = problem
        if problem:
            return
        error = Feedback.ERROR_NONE
        if command == request.COMMAND_START:
            if self.robot.standing:
                error = Feedback.ERROR_INIT_NOT_SITTING
            elif not self.robot.powered and self.robot.request_power(True)[1] == 0:
                error = Feedback.ERROR_POWER_ON_FAILURE
        with self._lock:
            self._last_command = command
            if command == request.COMMAND_START:
                self._started_ns, self._aborted, self._error = \
                    self.clock.now_nsec(), False, error
                self._finding = None
                if self._draw.chance(self._profile.spot_check_failure_probability):
                    self._finding = (self._draw.choice(CAMERAS), self._draw.choice(LOAD_CELLS))
            elif command == request.COMMAND_ABORT:
                self._aborted = True

    @unary(pb.SpotCheckFeedbackResponse)
    def SpotCheckFeedback(self, request, response, context):
        with self._lock:
            response.last_command = self._last_command
            response.error = self._error
            if self._error != Feedback.ERROR_NONE:
                response.state = Feedback.STATE_ERROR
                return
            if self._started_ns is None:
                response.state = Feedback.STATE_WAITING_FOR_COMMAND
                return
            if self._aborted:
                response.state = Feedback.STATE_USER_ABORTED
                return
            elapsed = (self.clock.now_nsec() - self._started_ns) / 1e9
        stage = int(elapsed / STAGE_SEC)
        response.progress = min(1.0, elapsed / (STAGE_SEC * len(STAGES)))
        if stage >= len(STAGES):
            response.state = Feedback.STATE_FINISHED
            camera_bad, cell_bad = self._finding or ("", "")
            for camera in CAMERAS:
                response.camera_results[camera].status = (
                    pb.DepthPlaneSpotCheckResult.STATUS_ERROR if camera == camera_bad
                    else pb.DepthPlaneSpotCheckResult.STATUS_OK)
            for cell in LOAD_CELLS:
                response.load_cell_results[cell].error = (
                    pb.LoadCellSpotCheckResult.ERROR_ZERO_OUT_OF_RANGE if cell == cell_bad
                    else pb.LoadCellSpotCheckResult.ERROR_NONE)
            response.last_cal_timestamp.CopyFrom(self.clock.timestamp())
        else:
            response.state = STAGES[stage]

    @unary(pb.CameraCalibrationCommandResponse)
    def CameraCalibrationCommand(self, request, response, context):
        problem = self._refusal(request, response) or \
            ("" if self.robot.powered else "motor power is off")
        with self._lock:
            if problem:
                self._calibration_started_ns = None
                self._calibration_problem = problem
                return
            self._calibration_problem = ""
            if request.command == request.COMMAND_START:
                self._calibration_started_ns = self.clock.now_nsec()
                self._calibration_canceled = False
            elif request.command == request.COMMAND_CANCEL:
                self._calibration_canceled = True

    @unary(pb.CameraCalibrationFeedbackResponse)
    def CameraCalibrationFeedback(self, request, response, context):
        with self._lock:
            started, canceled = self._calibration_started_ns, self._calibration_canceled
            problem = self._calibration_problem
        if problem:
            response.status = Calibration.STATUS_POWER_ERROR if "power" in problem else \
                Calibration.STATUS_LEASE_ERROR
            return
        if started is None:
            response.status = Calibration.STATUS_UNKNOWN
            return
        if canceled:
            response.status = Calibration.STATUS_USER_CANCELED
            return
        progress = (self.clock.now_nsec() - started) / 1e9 / CALIBRATION_SEC
        response.progress = min(1.0, progress)
        response.status = Calibration.STATUS_SUCCESS if progress >= 1.0 else \
            Calibration.STATUS_PROCESSING


def spec() -> ServiceSpec:
    return ServiceSpec("spot-check", "bosdyn.api.spot.SpotCheckService", "api.spot.robot",
                       spot_check_service_pb2_grpc.add_SpotCheckServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: SpotCheckServicer(parts.robot,
                                                             parts.config.field)),)
