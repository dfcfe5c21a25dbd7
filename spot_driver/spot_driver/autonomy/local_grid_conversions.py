"""The robot's local grids as ROS messages (pure functions): decoded values as
``spot_msgs/LocalGrid``, and thresholded as ``nav_msgs/OccupancyGrid`` for costmaps.

Cells are x-major in both the API and ROS (cell (i, j) at ``data[i + width * j]``), so a grid
keeps its layout; its origin is the corner frame's pose in ``odom``.
"""

import numpy as np
from bosdyn.api import local_grid_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from geometry_msgs.msg import Pose
from nav_msgs.msg import OccupancyGrid

from spot_driver.autonomy.graph_nav_conversions import pose_msg
from spot_driver.conversions.robot_data import RobotDataError
from spot_msgs.msg import LocalGrid

Grid = local_grid_pb2.LocalGrid
_DTYPES = {Grid.CELL_FORMAT_FLOAT32: "<f4", Grid.CELL_FORMAT_FLOAT64: "<f8",
           Grid.CELL_FORMAT_INT8: "i1", Grid.CELL_FORMAT_UINT8: "u1",
           Grid.CELL_FORMAT_INT16: "<i2", Grid.CELL_FORMAT_UINT16: "<u2"}
OCCUPIED, FREE, UNKNOWN = 100, 0, -1
# Grids whose cells are signed distances (m) to a region to keep out of.
DISTANCE_GRIDS = ("no_step", "obstacle_distance")


class GridDecodeError(RobotDataError):
    """A grid whose format, encoding or size does not add up."""


def decode(grid: local_grid_pb2.LocalGrid) -> np.ndarray:
    """Cell values (scale and offset applied) as a flat float32 array of nx * ny cells."""
    dtype = _DTYPES.get(grid.cell_format)
    if dtype is None:
        raise GridDecodeError(f"unknown cell format {grid.cell_format}")
    values = np.frombuffer(grid.data, dtype=dtype)
    if grid.encoding == Grid.ENCODING_RLE:
        if len(grid.rle_counts) != len(values):
            raise GridDecodeError("RLE counts do not match the data")
        values = np.repeat(values, np.asarray(grid.rle_counts, dtype=np.int64))
    elif grid.encoding != Grid.ENCODING_RAW:
        raise GridDecodeError(f"unknown encoding {grid.encoding}")
    cells = grid.extent.num_cells_x * grid.extent.num_cells_y
    if len(values) != cells:
        raise GridDecodeError(f"{len(values)} cells for a {grid.extent.num_cells_x} x "
                              f"{grid.extent.num_cells_y} grid")
    scale = grid.cell_value_scale or 1.0
    return (values.astype(np.float32) * np.float32(scale)
            + np.float32(grid.cell_value_offset))


def origin(grid: local_grid_pb2.LocalGrid, frame: str) -> Pose:
    """The corner of cell (0, 0) in ``frame``."""
    pose = get_a_tform_b(grid.transforms_snapshot, frame, grid.frame_name_local_grid_data)
    if pose is None:
        raise GridDecodeError(f"grid frame {grid.frame_name_local_grid_data!r} is not related "
                              f"to {frame!r}")
    return pose_msg(pose)


def local_grid_msg(grid: local_grid_pb2.LocalGrid, stamp, frame: str,
                   prefix: str = "") -> LocalGrid:
    msg = LocalGrid(name=grid.local_grid_type_name, resolution=grid.extent.cell_size,
                    width=grid.extent.num_cells_x, height=grid.extent.num_cells_y)
    msg.header.stamp, msg.header.frame_id = stamp, prefix + frame
    msg.origin = origin(grid, frame)
    msg.data = decode(grid)
    if grid.unknown_cells:
        msg.unknown = np.frombuffer(grid.unknown_cells, np.uint8).tobytes()
    return msg


def occupancy_grid(grid: local_grid_pb2.LocalGrid, stamp, frame: str, threshold: float,
                   prefix: str = "") -> OccupancyGrid:
    """A signed-distance grid thresholded: cells nearer than ``threshold`` (m) to the region
    (or inside it) are occupied, the others free, unknown cells unknown."""
    values = decode(grid)
    cells = np.where(values <= threshold, OCCUPIED, FREE).astype(np.int8)
    if grid.unknown_cells:
        unknown = np.frombuffer(grid.unknown_cells, np.uint8)
        if len(unknown) == len(cells):
            cells[unknown.astype(bool)] = UNKNOWN
    msg = OccupancyGrid()
    msg.header.stamp, msg.header.frame_id = stamp, prefix + frame
    msg.info.map_load_time = stamp
    msg.info.resolution = grid.extent.cell_size
    msg.info.width, msg.info.height = grid.extent.num_cells_x, grid.extent.num_cells_y
    msg.info.origin = origin(grid, frame)
    msg.data = cells.tobytes()
    return msg
