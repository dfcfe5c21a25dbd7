"""TF as a real Spot's snapshots make it: robot states and image responses shaped as a 4.x and a
5.x robot reports them (wrist ``link_wr1`` / ``arm0.link_wr1`` / both; feet_center), with and
without an arm, with the driver alone or beside robot_state_publisher (its transforms built
from the URDF), in each ``tf_root`` and ``frame_names``: one parent per frame, one tree,
nothing that moves on /tf_static (two robot states with the arm, legs and body elsewhere give
the same /tf_static).
Pure: the driver's state pipeline and sensor mounts, fed the simulator's snapshots."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from bosdyn.client.math_helpers import Quat, SE3Pose
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from spot_driver.description import frame_names as naming
from spot_driver.description.robot_model import link_names, robot_description
from spot_driver.perception.extrinsics import WRIST_IN_IMAGES, SensorMounts
from spot_driver.state.pipeline import StatePipeline, model_frames
from spot_sim import SimConfig
from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as arm_kinematics
from spot_sim.body.frame_tree import (
    WRIST_NAMES_4,
    WRIST_NAMES_5,
    build_snapshot,
    robot_state_view,
    sensor_view,
)
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.state import state_report

PREFIX = "spot1/"
SOFTWARE = {"4.x": WRIST_NAMES_4, "5.x": WRIST_NAMES_5, "5.x with the alias": ("link_wr1",
                                                                               *WRIST_NAMES_5)}
BODY_CAMERAS = ("frontleft_fisheye", "frontright_fisheye", "left_fisheye", "back_fisheye")
HAND_CAMERAS = ("hand_color_image_sensor", "hand_depth_sensor")


def full_tree(has_arm: bool, arm_q: np.ndarray, height: float, yaw: float):
    """The simulator's full tree for a body pose, arm joints and legs for ``height``."""
    odom_tform_body = SE3Pose(0.3, -0.2, height, Quat.from_yaw(yaw))
    vision_tform_body = SE3Pose(1.0, 0.5, height, Quat.from_yaw(yaw + 0.2))
    feet = kinematics.foot_positions_in_body(kinematics.leg_joint_positions(height))
    return build_snapshot(odom_tform_body, vision_tform_body, has_arm,
                          arm_frames=arm_kinematics.link_poses(arm_q) if has_arm else None,
                          has_lidar=True, feet=feet)


def rsp_edges(has_arm: bool, names: str = "spot") -> dict[str, str]:
    """child -> parent of everything robot_state_publisher publishes from the URDF."""
    urdf = ET.fromstring(robot_description(has_arm, PREFIX, names))
    return {j.find("child").get("link"): j.find("parent").get("link")
            for j in urdf.iter("joint")}


class Published:
    """What the driver puts on /tf and /tf_static for a sequence of robot states."""

    def __init__(self, root: str, rsp: bool, wrist_names: tuple[str, ...],
                 names: str = "spot") -> None:
        self.rsp, self.wrist_names = rsp, wrist_names
        self.pipeline = StatePipeline(root, PREFIX, model_frames() if rsp else frozenset(),
                                      names)
        self.static_mounts: list = []
        self.mounts = SensorMounts(PREFIX, {} if rsp else dict(WRIST_IN_IMAGES),
                                   self.static_mounts.append,
                                   naming.renames(names, link_names(has_arm=True)))
        self.tf: dict[str, str] = {}
        self.tf_static: dict[str, tuple] = {}  # child -> (parent, transform values)
        robot = SimRobot(SimConfig(has_arm=True), RobotClock(0.0))
        robot.step()
        self.template = state_report.robot_state(robot)

    def state(self, full, has_arm: bool) -> None:
        state = type(self.template)()
        state.CopyFrom(self.template)
        state.kinematic_state.transforms_snapshot.CopyFrom(
            robot_state_view(full, self.wrist_names))
        out = self.pipeline.messages(state, 0, (True, 0, 0), (0, 0))
        for t in deserialize_message(out.tf, TFMessage).transforms:
            assert self.tf.get(t.child_frame_id, t.header.frame_id) == t.header.frame_id
            self.tf[t.child_frame_id] = t.header.frame_id
        if out.tf_static is not None:
            self._static(out.tf_static.transforms)
        published = set(state.kinematic_state.transforms_snapshot.child_to_parent_edge_map)
        if self.rsp:
            published |= link_names(has_arm=True)
        for sensor in BODY_CAMERAS + ("sensor",) + (HAND_CAMERAS if has_arm else ()):
            self.mounts.update(sensor_view(full, sensor), sensor, published, None)
        if self.static_mounts:
            self._static(self.static_mounts[-1])

    def _static(self, transforms) -> None:
        for t in transforms:
            r, p = t.transform.rotation, t.transform.translation
            values = tuple(round(v, 9) for v in (p.x, p.y, p.z, r.w, r.x, r.y, r.z))
            self.tf_static[t.child_frame_id] = (t.header.frame_id, values)


def assert_one_tree(parents: dict[str, str], root: str) -> None:
    roots = {p for p in parents.values() if p not in parents}
    assert roots == {root}, f"roots {sorted(roots)} (want {root})"


@pytest.mark.parametrize("names", naming.NAMINGS)
@pytest.mark.parametrize("root", ["odom", "vision", "body"])
@pytest.mark.parametrize("rsp", [False, True], ids=["driver alone", "with rsp"])
@pytest.mark.parametrize(("software", "has_arm"), [("4.x", True), ("5.x", True),
                                                    ("5.x with the alias", True),
                                                    ("5.x", False)])
def test_one_tree_one_parent_each_and_nothing_moving_on_tf_static(root, rsp, software,
                                                                    has_arm, names):
    states = [full_tree(has_arm, arm_kinematics.STOW, kinematics.STAND_HEIGHT, 0.0),
              full_tree(has_arm, arm_kinematics.READY, kinematics.STAND_HEIGHT - 0.08, 0.7)]
    driver = Published(root, rsp, SOFTWARE[software], names)
    driver.state(states[0], has_arm)
    first_static = dict(driver.tf_static)
    driver.state(states[1], has_arm)
    # nothing that moves is on /tf_static: the second state (arm, legs, body moved) changed
    # none of it
    assert driver.tf_static == first_static, sorted(
        child for child in driver.tf_static if driver.tf_static[child] != first_static.get(child))
    both = set(driver.tf) & set(driver.tf_static)
    assert not both, f"on /tf and /tf_static: {sorted(both)}"
    parents = {**driver.tf, **{child: parent for child, (parent, _) in
                               driver.tf_static.items()}}
    if rsp:
        model = rsp_edges(has_arm, names)
        shared = set(parents) & set(model)
        assert not shared, f"published by the driver and robot_state_publisher: {shared}"
        parents.update(model)
    assert_one_tree(parents, PREFIX + root)
    assert PREFIX + "feet_center" in driver.tf  # it moves with the feet
    sensors = BODY_CAMERAS + ("sensor",) + (HAND_CAMERAS if has_arm else ())
    assert {PREFIX + s for s in sensors} <= set(parents)
    if has_arm:
        hand_parent = parents[PREFIX + "hand_color_image_sensor"]
        wrist = ("link_wr1" if software == "4.x" and not rsp else
                 naming.published("arm0.link_wr1", names))
        assert hand_parent == PREFIX + wrist
    if names == "spot_ros2":  # nothing under a robot name that spot_ros2 names otherwise
        assert not [frame for frame in parents if frame.startswith(PREFIX + "arm0.")]
