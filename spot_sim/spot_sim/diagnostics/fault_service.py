"""fault: clients raise and clear service faults, which robot state reports."""

from bosdyn.api import fault_service_pb2_grpc, service_fault_pb2
from bosdyn.api.header_pb2 import CommonError

from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.core.service_faults import ServiceFaults


class FaultServicer(fault_service_pb2_grpc.FaultServiceServicer):
    def __init__(self, clock, faults: ServiceFaults) -> None:
        self.clock, self.faults = clock, faults

    @unary(service_fault_pb2.TriggerServiceFaultResponse)
    def TriggerServiceFault(self, request, response, context):
        fault_id = request.fault.fault_id
        if not fault_id.fault_name or not (fault_id.service_name or fault_id.payload_guid):
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "a fault needs a fault_name and a service_name or payload_guid")
            return
        response.status = (response.STATUS_OK if self.faults.trigger(request.fault)
                           else response.STATUS_FAULT_ALREADY_ACTIVE)

    @unary(service_fault_pb2.ClearServiceFaultResponse)
    def ClearServiceFault(self, request, response, context):
        cleared = self.faults.clear(request.fault_id, request.clear_all_service_faults,
                                    request.clear_all_payload_faults)
        response.status = response.STATUS_OK if cleared else response.STATUS_FAULT_NOT_ACTIVE


def spec() -> ServiceSpec:
    return ServiceSpec("fault", "bosdyn.api.FaultService", "api.spot.robot",
                       fault_service_pb2_grpc.add_FaultServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: FaultServicer(parts.clock,
                                                        parts.robot.service_faults)),)
