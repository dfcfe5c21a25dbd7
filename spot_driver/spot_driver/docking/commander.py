"""Docking and undocking through the robot's docking service, with the checks that keep a bad
request from reaching the robot; docks and fiducials in view (world objects)."""

import time

from bosdyn.api import world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.docking import DockingClient
from bosdyn.client.robot_command import RobotCommandBuilder
from bosdyn.client.world_object import WorldObjectClient

from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask
from spot_driver.core.state_cache import RobotStateCache
from spot_driver.docking import world_objects

Feedback = docking_pb2.DockingCommandFeedbackResponse
Response = docking_pb2.DockingCommandResponse
IN_PROGRESS = Feedback.STATUS_IN_PROGRESS
_OBJECT_TYPES = [world_object_pb2.WORLD_OBJECT_DOCK, world_object_pb2.WORLD_OBJECT_APRILTAG,
                 world_object_pb2.WORLD_OBJECT_USER_NOGO]
FOLLOW_GRACE_S = 5.0  # followed this long past the command's own timeout before giving up
_REFUSALS = {
    Response.STATUS_ERROR_DOCK_NOT_FOUND: "dock {dock_id} not found: it is not in view of "
                                          "the robot",
    Response.STATUS_ERROR_NOT_DOCKED: "the robot is not docked",
    Response.STATUS_ERROR_GRIPPER_HOLDING_ITEM: "the gripper is holding an item",
    Response.STATUS_ERROR_NOT_AVAILABLE: "docking is not available now (motors off, a "
                                         "behavior fault, or docked at another dock)",
}


def feedback_name(status: int) -> str:
    return Feedback.Status.Name(status)


class DockingCommander:
    """Starts docking commands and reads their feedback and the docking state."""

    def __init__(self, connection: RobotConnection, cache: RobotStateCache) -> None:
        self._connection, self._cache = connection, cache
        self._ranges: list[docking_pb2.ConfigRange] | None = None

    @property
    def client(self) -> DockingClient:
        return self._connection.client(DockingClient)

    def dock_ranges(self) -> list[docking_pb2.ConfigRange]:
        if self._ranges is None:
            self._ranges = list(self.client.get_docking_config())
        return self._ranges

    def state(self) -> docking_pb2.DockState:
        return self.client.get_docking_state()

    def start(self, dock_id: int, behavior: int, timeout: float) -> int:
        """Send a docking command (``PREP_POSE_UNDOCK`` to undock); its command id."""
        self._connection.require_lease()
        if not (timeout > 0 and timeout < 3600):
            raise CommandError(f"docking timeout must be in (0, 3600) s, not {timeout}")
        if behavior not in docking_pb2.PrepPoseBehavior.values():
            raise CommandError(f"unknown prep pose behavior {behavior}")
        if behavior != docking_pb2.PREP_POSE_UNDOCK:
            ranges = self.dock_ranges()
            if not any(r.id_start <= dock_id <= r.id_end for r in ranges):
                known = ", ".join(f"{r.id_start}-{r.id_end}" for r in ranges) or "none"
                raise CommandError(f"unknown dock id {dock_id}: this robot's docks have "
                                   f"ids {known}")
        self._cache.require_ready()
        robot = self._connection.robot
        end_time = robot.time_sync.robot_timestamp_from_local_secs(time.time() + timeout)
        try:
            return self.client.docking_command(
                dock_id, robot.time_sync.endpoint.clock_identifier, end_time, behavior)
        except sdk_errors.ResponseError as exc:
            status = getattr(exc.response, "status", None)
            if status in _REFUSALS:
                raise CommandError(_REFUSALS[status].format(dock_id=dock_id)) from None
            raise

    def feedback(self, command_id: int) -> int:
        return self.client.docking_command_feedback_full(command_id).status

    def world_objects(self, types: list[int] | None = None) -> list[world_object_pb2.WorldObject]:
        """The world objects of ``types`` (default: docks, fiducials, user no-go regions)."""
        client = self._connection.client(WorldObjectClient)
        return list(client.list_world_objects(object_type=_OBJECT_TYPES if types is None
                                              else types).world_objects)

    def mutate(self, request: world_object_pb2.MutateWorldObjectRequest) -> int:
        """Send one checked mutation; the object's id (CommandError when refused)."""
        client = self._connection.client(WorldObjectClient)
        return world_objects.mutated_id(client.mutate_world_objects(request, timeout=5.0),
                                        request.mutation.object.id)

    def stop(self) -> None:
        """Stop the body where it is: ends a docking command mid-way."""
        self._connection.command_client.robot_command(RobotCommandBuilder.stop_command())


class DockingTask(RobotTask):
    """One dock (or undock: ``PREP_POSE_UNDOCK``) run, followed until the robot reports an
    end; it succeeds when that end is ``wanted``."""

    name = "docking"

    def __init__(self, docking: DockingCommander, dock_id: int, behavior: int, timeout: float,
                 wanted: int) -> None:
        self._docking, self._dock_id, self._behavior = docking, dock_id, behavior
        self._command_timeout, self._wanted = timeout, wanted
        self.timeout = timeout + FOLLOW_GRACE_S
        self._command_id = 0
        self._last = None

    def start(self) -> None:
        self._command_id = self._docking.start(self._dock_id, self._behavior,
                                               self._command_timeout)

    def poll(self) -> Progress:
        status = self._docking.feedback(self._command_id)
        name = feedback_name(status)
        changed, self._last = status != self._last, status
        progress = Progress(status=name, feedback={"status": name} if changed else None)
        if status != IN_PROGRESS:
            progress.done, progress.ok = True, status == self._wanted
            at_prep = self._wanted == Feedback.STATUS_AT_PREP_POSE
            progress.message = ("at the prep pose" if at_prep else "docked") if progress.ok \
                else f"{self.name} failed: {name}"
        return progress

    def stop(self) -> None:
        self._docking.stop()
