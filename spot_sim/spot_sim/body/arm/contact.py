"""Where a tool pushed through space meets the scene: the contact geometry shared by arm
surface contact, Cartesian force axes and impedance control. Positions are in the body frame;
``odom_t_body`` places them in the scene."""

from typing import Protocol

import numpy as np

MAX_PRESS_REACH_M = 1.0  # how far along a force axis the tool looks for a surface
# Spot Arm's published continuous payload (5 kg) as the force a 100 % press exerts: Boston
# Dynamics publishes no press-force figure.
MAX_PRESS_FORCE_N = 5.0 * 9.81


class Scene(Protocol):
    """What the arm needs of the world it moves in (``spot_sim.perception.scene.Scene``)."""

    def raycast(self, origin: np.ndarray, directions: np.ndarray,
                max_t: float) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each ray to the first surface, and that surface's index (negative
        where nothing is hit within ``max_t``)."""


def first_contact(scene: Scene, odom_t_body: np.ndarray, start: np.ndarray,
                  end: np.ndarray) -> np.ndarray | None:
    """The first surface point (body) on the segment ``start`` -> ``end``, or None."""
    segment = end - start
    length = float(np.linalg.norm(segment))
    if length < 1e-6:
        return None
    unit = segment / length
    origin = (odom_t_body @ np.append(start, 1.0))[:3]
    t, surface = scene.raycast(origin, (odom_t_body[:3, :3] @ unit)[None], length)
    if surface[0] < 0:  # nothing hit
        return None
    return start + unit * float(t[0])


def pressed(scene: Scene, odom_t_body: np.ndarray, task_r: np.ndarray, force_axes: np.ndarray,
            push: np.ndarray, wanted: np.ndarray, now: np.ndarray) -> tuple[np.ndarray, bool]:
    """The tool position (body) under force control: each force axis of the task frame
    (rotation ``task_r``) starts where the tool is ``now`` instead of at the ``wanted``
    position, then the tool moves along ``push`` (task frame; zero: it stays) to the first
    surface, or MAX_PRESS_REACH_M along it. Also whether there is a surface to press on."""
    start = wanted.copy()
    for axis in np.flatnonzero(force_axes):
        direction = task_r[:, axis]
        start += direction * float(direction @ (now - wanted))
    norm = float(np.linalg.norm(push))
    if norm < 1e-9:
        return start, False
    direction = task_r @ (push / norm)
    end = start + direction * MAX_PRESS_REACH_M
    contact = first_contact(scene, odom_t_body, start, end)
    return (end, False) if contact is None else (contact, True)


def clip_norm(vector: np.ndarray, limit: float) -> np.ndarray:
    """``vector`` scaled down to at most ``limit`` long."""
    norm = float(np.linalg.norm(vector))
    return vector * (limit / norm) if norm > limit > 0 else vector
