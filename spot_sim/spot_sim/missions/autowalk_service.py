"""autowalk-service: compile an Autowalk into a mission, and load it into the mission service
(see ``spot_sim.missions.autowalk`` for what is supported). Both RPCs stream DataChunks each
way, as the SDK's AutowalkClient sends them."""

from bosdyn.api.autowalk import autowalk_pb2, autowalk_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.mission import mission_pb2
from bosdyn.client import data_chunk
from google.protobuf.message import DecodeError

from spot_sim.core.rpc import CHUNK_BYTES, stamped
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.missions.autowalk import compile_walk
from spot_sim.missions.mission_service import MissionServicer


def _node_ids(info: mission_pb2.NodeInfo) -> dict[str, int]:
    """user_data id -> mission node id over a loaded mission's NodeInfo tree."""
    out, stack = {}, [info]
    while stack:
        node = stack.pop()
        if node.user_data.id:
            out.setdefault(node.user_data.id, node.id)
        stack.extend(node.children)
    return out


def _copy_failed(response, failed: dict) -> None:
    for index, element in failed.items():
        response.failed_elements[index].CopyFrom(element)


class AutowalkServicer(autowalk_service_pb2_grpc.AutowalkServiceServicer):
    def __init__(self, clock, mission_servicer) -> None:
        self.clock, self.mission = clock, mission_servicer

    def _stamp(self, response, request) -> None:
        stamped(self.clock, response, request.header)

    def _read(self, request_iterator, request, response) -> bool:
        try:
            data_chunk.parse_from_chunks(request_iterator, request)
        except DecodeError:
            response.header.error.code = CommonError.CODE_INVALID_REQUEST
            response.header.error.message = "the request is not a walk"
            return False
        return True

    def CompileAutowalk(self, request_iterator, context):
        request = autowalk_pb2.CompileAutowalkRequest()
        response = autowalk_pb2.CompileAutowalkResponse()
        if self._read(request_iterator, request, response):
            compiled = compile_walk(request.walk, request.treat_warnings_as_errors)
            _copy_failed(response, compiled.failed)
            response.element_identifiers.extend(compiled.identifiers)
            if compiled.root is None:
                response.status = response.STATUS_COMPILE_ERROR
            else:
                response.status = response.STATUS_OK
                response.root.CopyFrom(compiled.root)
        self._stamp(response, request)
        yield from data_chunk.chunk_message(response, CHUNK_BYTES)

    def LoadAutowalk(self, request_iterator, context):
        request = autowalk_pb2.LoadAutowalkRequest()
        response = autowalk_pb2.LoadAutowalkResponse()
        if self._read(request_iterator, request, response):
            self._load(request, response)
        self._stamp(response, request)
        yield from data_chunk.chunk_message(response, CHUNK_BYTES)

    def _load(self, request, response) -> None:
        compiled = compile_walk(request.walk, request.treat_warnings_as_errors)
        _copy_failed(response, compiled.failed)
        if compiled.root is None:
            response.status = response.STATUS_COMPILE_ERROR
            return
        loaded = self.mission.LoadMission(mission_pb2.LoadMissionRequest(
            root=compiled.root, leases=request.leases), None)
        response.lease_use_results.extend(loaded.lease_use_results)
        response.failed_nodes.extend(loaded.failed_nodes)
        if loaded.header.error.code != CommonError.CODE_OK:
            response.header.error.CopyFrom(loaded.header.error)
            return
        if loaded.status != loaded.STATUS_OK:
            response.status = response.STATUS_VALIDATE_ERROR
            return
        response.status = response.STATUS_OK
        response.mission_id = loaded.mission_info.id
        ids = _node_ids(loaded.mission_info.root)
        for identifiers in compiled.identifiers:
            for part in (identifiers.root_id, identifiers.action_id, identifiers.navigation_id):
                if part.user_data_id in ids:
                    part.node_id = ids[part.user_data_id]
            response.element_identifiers.append(identifiers)


def spec() -> ServiceSpec:
    return ServiceSpec("autowalk-service", "bosdyn.api.autowalk.AutowalkService",
                       "api.spot.robot",
                       autowalk_service_pb2_grpc.add_AutowalkServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: AutowalkServicer(parts.clock,
                                                            parts.servicer(MissionServicer))),)
