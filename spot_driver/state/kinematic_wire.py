"""The numbers of a KinematicState read from its wire bytes through a template (fast path).

Reading joint values and frame poses through protobuf's Python objects costs about 1 us per
joint or frame, twice the parse of the whole RobotState. From one state to the next only
numbers change, so a ``wire.ShapeTemplate`` of one state reads the next one's doubles in one
``struct`` unpack (see wire.py). ``KinematicTemplate`` adds where the wanted numbers are
among them: each joint's position, velocity and load, the body twist and chosen frames'
poses. A state the template does not fit makes ``read`` return None: the caller reads it
through protobuf and makes a new template from it.
"""

from bosdyn.api import robot_state_pb2

from spot_driver.state.wire import ShapeTemplate, is_time


class KinematicTemplate:
    """Reads states shaped like ``sample``: joint positions, velocities and loads, the body
    twist (in vision or odom) and the poses of the child frames ``edge_keys``.

    ``read(data)`` gives the numbers of one state; the index lists say where each wanted
    number is in them (0.0 for one absent from the wire). Raises ValueError when ``sample``
    has fields protobuf's KinematicState does not.
    """

    def __init__(self, sample: robot_state_pb2.KinematicState, edge_keys: list[str],
                 velocity_in_vision: bool) -> None:
        self._shape = ShapeTemplate(sample.SerializeToString(), sample.DESCRIPTOR,
                                    opaque=is_time)
        offsets = {path: i for i, path in enumerate(self._shape.doubles)}
        self.size = len(offsets) + 1  # values: the doubles, then a 0.0 for absent ones

        def index(*path) -> int:
            return offsets.get(path, len(offsets))

        joints = range(len(sample.joint_states))
        self.positions, self.velocities, self.loads = (
            [index("joint_states", i, field, "value") for i in joints]
            for field in ("position", "velocity", "load"))
        velocity = "velocity_of_body_in_vision" if velocity_in_vision \
            else "velocity_of_body_in_odom"
        self.twist = [index(velocity, part, axis) for part in ("linear", "angular")
                      for axis in "xyz"]
        edges = ("transforms_snapshot", "child_to_parent_edge_map")
        self.poses = [[index(*edges, key, "value", "parent_tform_child", part, axis)
                       for part, axes in (("position", "xyz"), ("rotation", "xyzw"))
                       for axis in axes] for key in edge_keys]
        if any(key not in sample.transforms_snapshot.child_to_parent_edge_map
               for key in edge_keys):
            raise ValueError("a frame to read is not in the sample's tree")

    def read(self, data: bytes) -> tuple[float, ...] | None:
        """Every double of one serialized KinematicState then 0.0, or None when ``data`` is
        not shaped like the sample."""
        numbers = self._shape.read(data)
        return None if numbers is None else (*numbers[0], 0.0)
