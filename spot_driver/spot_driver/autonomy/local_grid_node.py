"""The robot's local grids around it: signed-distance grids (no_step, obstacle_distance)
thresholded as nav_msgs/OccupancyGrid for Nav2 costmaps, the others (terrain, intensity, ...)
decoded as spot_msgs/LocalGrid, all in ``odom`` at ``local_grid_rate``. Only grids with a
subscriber are requested from the robot."""

from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node

from spot_driver.autonomy import local_grid_conversions as convert
from spot_driver.autonomy.local_grids import LocalGrids
from spot_driver.conversions.time import robot_stamp_to_msg
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import describe
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_msgs.msg import LocalGrid

GRID_TYPES = ["terrain", "terrain_valid", "intensity", "no_step", "obstacle_distance"]


class LocalGridNode(PeriodicWork, Node):
    """``local_grids/<type>`` for each of ``local_grid_types``."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_local_grids", namespace=context.namespace)
        self._connection = context.connection
        self.grids = LocalGrids(context.connection)
        rate = declare(self, "local_grid_rate", 2.0)
        self.types = list(declare(self, "local_grid_types", GRID_TYPES))
        self.thresholds = {"no_step": declare(self, "no_step_threshold", 0.0),
                           "obstacle_distance": declare(self, "obstacle_distance_threshold",
                                                        0.3)}
        self.prefix = declare(self, "frame_prefix", "")
        self._pubs = {
            name: self.create_publisher(
                OccupancyGrid if name in convert.DISTANCE_GRIDS else LocalGrid,
                f"local_grids/{name}", qos.STATE)
            for name in self.types}
        if rate > 0 and self.types:
            self.every(1.0 / rate, self.publish)

    def publish(self) -> None:
        """Fetch and publish the grids someone subscribes to (none: no request at all)."""
        wanted = [name for name in self.types
                  if self._pubs[name].get_subscription_count() > 0]
        if not wanted:
            return
        try:
            responses = self.grids.get(wanted)
        except Exception as exc:
            self.get_logger().warning(f"local grids: {describe(exc)}",
                                      throttle_duration_sec=10.0)
            return
        for response in responses:
            name = response.local_grid_type_name
            if response.status != response.STATUS_OK or name not in self._pubs:
                self.get_logger().warning(f"local grid {name!r}: status {response.status}",
                                          throttle_duration_sec=30.0)
                continue
            grid = response.local_grid
            stamp = robot_stamp_to_msg(grid.acquisition_time, self._connection.skew_nsec)
            try:
                if name in convert.DISTANCE_GRIDS:
                    msg = convert.occupancy_grid(grid, stamp, "odom", self.thresholds[name],
                                                 self.prefix)
                else:
                    msg = convert.local_grid_msg(grid, stamp, "odom", self.prefix)
            except convert.GridDecodeError as exc:
                self.get_logger().warning(f"local grid {name!r}: {exc}",
                                          throttle_duration_sec=30.0)
                continue
            self._pubs[name].publish(msg)
