"""robot-id, auth and directory: what a client needs before anything else."""

import hmac

from bosdyn.api import (
    auth_pb2,
    auth_service_pb2_grpc,
    directory_pb2,
    directory_service_pb2_grpc,
    robot_id_pb2,
    robot_id_service_pb2_grpc,
)

from spot_sim.core.clock import RobotClock
from spot_sim.core.config import SimConfig
from spot_sim.core.directory import Directory
from spot_sim.core.rpc import TokenIssuer, unary
from spot_sim.core.served import Served, ServiceSpec

SOFTWARE_VERSION = (5, 2, 0)


class RobotIdServicer(robot_id_service_pb2_grpc.RobotIdServiceServicer):
    def __init__(self, config: SimConfig, clock: RobotClock) -> None:
        self.config, self.clock = config, clock

    @unary(robot_id_pb2.RobotIdResponse)
    def GetRobotId(self, request, response, context):
        robot_id = response.robot_id
        robot_id.serial_number = self.config.serial_number
        robot_id.species = "spot"
        robot_id.version = "V3"
        robot_id.nickname = self.config.nickname
        robot_id.computer_serial_number = "SIM-CPU-0001"
        release = robot_id.software_release
        release.version.major_version, release.version.minor_version, \
            release.version.patch_level = SOFTWARE_VERSION
        release.name = "spot-sim"
        release.api_version = ".".join(str(v) for v in SOFTWARE_VERSION)


class AuthServicer(auth_service_pb2_grpc.AuthServiceServicer):
    def __init__(self, config: SimConfig, clock: RobotClock, tokens: TokenIssuer) -> None:
        self.config, self.clock, self.tokens = config, clock, tokens

    @unary(auth_pb2.GetAuthTokenResponse)
    def GetAuthToken(self, request, response, context):
        if request.token:
            user = self.tokens.user_of(request.token)
            if user is None:
                response.status = response.STATUS_INVALID_TOKEN
                return
        else:
            good_user = hmac.compare_digest(request.username, self.config.username)
            good_password = hmac.compare_digest(request.password, self.config.password)
            if not (good_user and good_password):
                response.status = response.STATUS_INVALID_LOGIN
                return
            user = request.username
        response.status = response.STATUS_OK
        response.token = self.tokens.issue(user)


class DirectoryServicer(directory_service_pb2_grpc.DirectoryServiceServicer):
    def __init__(self, clock: RobotClock, directory: Directory) -> None:
        self.clock, self.directory = clock, directory

    @unary(directory_pb2.ListServiceEntriesResponse)
    def ListServiceEntries(self, request, response, context):
        response.service_entries.extend(self.directory.entries())

    @unary(directory_pb2.GetServiceEntryResponse)
    def GetServiceEntry(self, request, response, context):
        entry = self.directory.get(request.service_name)
        if entry is None:
            response.status = response.STATUS_NONEXISTENT_SERVICE
            return
        response.status = response.STATUS_OK
        response.service_entry.CopyFrom(entry)


def directory_entries(clock: RobotClock, specs: list[ServiceSpec]
                      ) -> list[directory_pb2.ServiceEntry]:
    """The directory entries of the robot's own services."""
    entries = []
    for spec in specs:
        entry = directory_pb2.ServiceEntry(name=spec.name, type=spec.type,
                                           authority=spec.authority,
                                           user_token_required=spec.user_token_required)
        entry.last_update.CopyFrom(clock.timestamp())
        entries.append(entry)
    return entries


def specs() -> list[ServiceSpec]:
    return [
        ServiceSpec("robot-id", "bosdyn.api.RobotIdService", "id.spot.robot",
                    robot_id_service_pb2_grpc.add_RobotIdServiceServicer_to_server),
        ServiceSpec("auth", "bosdyn.api.AuthService", "auth.spot.robot",
                    auth_service_pb2_grpc.add_AuthServiceServicer_to_server),
        ServiceSpec("directory", "bosdyn.api.DirectoryService", "api.spot.robot",
                    directory_service_pb2_grpc.add_DirectoryServiceServicer_to_server),
    ]


SERVICES = (
    Served(specs()[0], lambda parts: RobotIdServicer(parts.config, parts.clock)),
    Served(specs()[1], lambda parts: AuthServicer(parts.config, parts.clock, parts.tokens)),
    Served(specs()[2], lambda parts: DirectoryServicer(parts.clock, parts.directory)),
)
