"""The robot's local grids (terrain, no_step, obstacle_distance, ...) through the shared
connection."""

from bosdyn.api import local_grid_pb2
from bosdyn.client.local_grid import LocalGridClient

from spot_driver.core.connection import RobotConnection


class LocalGrids:
    """Fetches the robot's local grids by type name."""

    def __init__(self, connection: RobotConnection) -> None:
        self._connection = connection

    def get(self, names: list[str]) -> list[local_grid_pb2.LocalGridResponse]:
        return list(self._connection.client(LocalGridClient).get_local_grids(names))
