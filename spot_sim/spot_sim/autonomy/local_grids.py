"""Local grids around the robot, computed from the scene: terrain height, terrain validity,
intensity, no-step and obstacle distance, in the Spot API's cell formats and encodings.

Every grid is ``CELLS`` x ``CELLS`` cells of ``CELL_SIZE`` m, aligned with ``odom`` and snapped
to the cell lattice (so a grid does not shimmer as the robot moves), centred on the body. The
corner frame ``<type>_local_grid_corner`` is a child of ``odom``. Values, as the API decodes
them (``value * cell_value_scale + cell_value_offset``):

| type | format, encoding | meaning |
|---|---|---|
| terrain | INT16, raw, scale 0.001 | ground height (m) in odom |
| terrain_valid | UINT8, raw | 1 where the height is known (everywhere here) |
| intensity | UINT8, raw | the floor's grey level as the cameras see it |
| no_step | INT16, RLE, scale 0.001 | signed distance (m) to a no-step region; <= 0 is no-step |
| obstacle_distance | INT16, raw, scale 0.001 | signed distance (m) to an obstacle; <= 0 is inside |

No-step regions are any box; obstacles are boxes taller than ``OBSTACLE_HEIGHT``. Distances
are measured inside the grid's window and capped at ``MAX_DISTANCE``.
"""

import functools
import math

import numpy as np
from bosdyn.api import local_grid_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from scipy import ndimage

from spot_sim.perception.scene import Scene

CELLS = 128
CELL_SIZE = 0.03  # m
OBSTACLE_HEIGHT = 0.3  # m
NO_STEP_HEIGHT = 0.05  # m
MAX_DISTANCE = 2.0  # m
SCALE = 0.001
Grid = local_grid_pb2.LocalGrid
TYPES = ("terrain", "terrain_valid", "intensity", "no_step", "obstacle_distance")


def corner_frame(grid_type: str) -> str:
    return f"{grid_type}_local_grid_corner"


def corner(body_x: float, body_y: float) -> tuple[int, int]:
    """Lattice index of the grid's corner cell for a body position."""
    return (math.floor(body_x / CELL_SIZE) - CELLS // 2,
            math.floor(body_y / CELL_SIZE) - CELLS // 2)


def _signed_distance(mask: np.ndarray) -> np.ndarray:
    outside = ndimage.distance_transform_edt(~mask) if mask.any() else np.full(mask.shape, 1e9)
    inside = ndimage.distance_transform_edt(mask)
    return np.clip((outside - inside) * CELL_SIZE, -MAX_DISTANCE, MAX_DISTANCE)


def _rle(values: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Run-length encoding of a flat array: (value per run, run lengths)."""
    change = np.flatnonzero(np.diff(values)) + 1
    starts = np.concatenate(([0], change))
    lengths = np.diff(np.concatenate((starts, [len(values)])))
    return values[starts], lengths.tolist()


@functools.lru_cache(maxsize=64)
def _fields(scene: Scene, cx: int, cy: int) -> dict[str, np.ndarray]:
    """Cell values (rows are y, columns x) of every grid type at corner index (cx, cy)."""
    xs = (cx + np.arange(CELLS) + 0.5) * CELL_SIZE
    ys = (cy + np.arange(CELLS) + 0.5) * CELL_SIZE
    x, y = np.meshgrid(xs, ys)
    height = np.zeros_like(x)
    shade = np.where((np.floor(x * 2) + np.floor(y * 2)) % 2 == 0, 95.0, 145.0)
    for box in scene.boxes:
        inside = (x >= box.lo[0]) & (x <= box.hi[0]) & (y >= box.lo[1]) & (y <= box.hi[1])
        height = np.where(inside, np.maximum(height, box.hi[2]), height)
        shade = np.where(inside, box.shade, shade)
    return {
        "terrain": height,
        "terrain_valid": np.ones_like(height),
        "intensity": shade,
        "no_step": _signed_distance(height > NO_STEP_HEIGHT),
        "obstacle_distance": _signed_distance(height > OBSTACLE_HEIGHT),
    }


def local_grid(scene: Scene, grid_type: str, body_x: float, body_y: float,
               transforms_snapshot, timestamp) -> Grid:
    """One local grid around (body_x, body_y); ``transforms_snapshot`` is the robot's frame
    tree (with ``odom``), to which the grid's corner frame is added."""
    cx, cy = corner(body_x, body_y)
    values = _fields(scene, cx, cy)[grid_type].ravel()
    grid = Grid(local_grid_type_name=grid_type, acquisition_time=timestamp,
                frame_name_local_grid_data=corner_frame(grid_type))
    grid.extent.cell_size = CELL_SIZE
    grid.extent.num_cells_x = grid.extent.num_cells_y = CELLS
    grid.transforms_snapshot.CopyFrom(transforms_snapshot)
    edge = grid.transforms_snapshot.child_to_parent_edge_map[corner_frame(grid_type)]
    edge.parent_frame_name = "odom"
    edge.parent_tform_child.CopyFrom(SE3Pose(cx * CELL_SIZE, cy * CELL_SIZE, 0.0,
                                             Quat()).to_proto())
    if grid_type in ("terrain_valid", "intensity"):
        grid.cell_format, grid.encoding = Grid.CELL_FORMAT_UINT8, Grid.ENCODING_RAW
        grid.data = np.clip(values, 0, 255).astype(np.uint8).tobytes()
        return grid
    grid.cell_format, grid.cell_value_scale = Grid.CELL_FORMAT_INT16, SCALE
    cells = np.round(values / SCALE).astype("<i2")
    if grid_type == "no_step":
        runs, counts = _rle(cells)
        grid.encoding, grid.data = Grid.ENCODING_RLE, runs.astype("<i2").tobytes()
        grid.rle_counts.extend(counts)
    else:
        grid.encoding, grid.data = Grid.ENCODING_RAW, cells.tobytes()
    return grid
