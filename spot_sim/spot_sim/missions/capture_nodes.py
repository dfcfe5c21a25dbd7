"""The mission's DataAcquisition node: a capture request sent to the robot's
data-acquisition service in process (so it passes a client's checks), with the group and
action names formatted from the blackboard, done when the robot has acquired or saved the
data as the node asks, and cancelled when the node is halted (unless told not to)."""

from bosdyn.api import data_acquisition_pb2
from bosdyn.api.mission import nodes_pb2

from spot_sim.missions.blackboard_nodes import format_from_blackboard
from spot_sim.missions.nodes import FAILURE, RUNNING, SUCCESS, MissionNodeError, Node

Status = data_acquisition_pb2.GetStatusResponse
Behavior = nodes_pb2.DataAcquisition
_FAILED = {Status.STATUS_DATA_ERROR, Status.STATUS_TIMEDOUT, Status.STATUS_INTERNAL_ERROR,
           Status.STATUS_ACQUISITION_CANCELLED, Status.STATUS_REQUEST_ID_DOES_NOT_EXIST}
_ACQUIRED = {Status.STATUS_SAVING, Status.STATUS_COMPLETE}


class DataAcquisition(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.DataAcquisition):
        super().__init__(node_id, name, parameters)
        self.spec, self.request_id = spec, 0
        self._resume = 0  # a request left running by a halt, followed again on resume

    def _request(self, ctx) -> data_acquisition_pb2.AcquireDataRequest:
        request = data_acquisition_pb2.AcquireDataRequest()
        request.CopyFrom(self.spec.request)
        action = request.action_id
        if self.spec.group_name_format:
            action.group_name = format_from_blackboard(self.spec.group_name_format,
                                                       ctx.blackboard)
        if self.spec.action_name_format:
            action.action_name = format_from_blackboard(self.spec.action_name_format,
                                                        ctx.blackboard)
        action.timestamp.CopyFrom(ctx.timestamp(ctx.clock.now_nsec()))
        return request

    def start(self, ctx):
        self.request_id, self._resume = self._resume, 0

    def update(self, ctx):
        if self.request_id == 0:
            response = ctx.robot.acquire_data(self._request(ctx))
            if response.status != response.STATUS_OK:
                raise MissionNodeError(
                    "data acquisition refused: " + (response.header.error.message or
                                                    response.Status.Name(response.status)))
            self.request_id = response.request_id
            if self.spec.completion_behavior == Behavior.COMPLETE_AFTER_REQUEST:
                return SUCCESS
        status = ctx.robot.acquisition_status(self.request_id)
        if status.status == Status.STATUS_COMPLETE or (
                self.spec.completion_behavior == Behavior.COMPLETE_AFTER_ACQUIRED
                and status.status in _ACQUIRED):
            return SUCCESS
        if status.status in _FAILED:
            self.error = Status.Status.Name(status.status) + "".join(
                f"; {e.error_message}" for e in status.data_errors)
            return FAILURE
        return RUNNING

    def halt(self, ctx):
        if self.running and self.request_id:
            if self.spec.disable_cancel_on_pause_or_stop:
                self._resume = self.request_id
            else:
                ctx.robot.cancel_acquisition(self.request_id)
        super().halt(ctx)

    def finish(self, ctx):
        self.request_id = 0
