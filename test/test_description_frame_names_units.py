"""``frame_names:=spot_ros2``: the model, the driver's TF, the sensors' mounts and MoveIt's
SRDF under spot_ros2's frame names (``description/frame_names.py``), against spot_ros2's own
model where it states them (rai-opensource/spot_description: ``arm_link_*``, ``base_link``,
``front_rail``, ``rear_rail``), and the default unchanged."""

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yourdfpy
from bosdyn.client.math_helpers import Quat, SE3Pose
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from spot_driver.conversions import frames
from spot_driver.description import frame_names as naming
from spot_driver.description import moveit_config, robot_model
from spot_driver.perception.extrinsics import SensorMounts
from spot_driver.state.pipeline import StatePipeline, model_frames
from spot_sim.body.frame_tree import build_snapshot, robot_state_view, sensor_view

REPO = Path(__file__).resolve().parent.parent
DRIVER_PKG = REPO / "spot_driver"  # the spot_driver package\'s folder
# spot_ros2's model (spot_macro.xacro, spot_arm_macro.urdf): its names for the arm's links and
# the frames it has beyond the robot's, with their fixed poses in body
SPOT_ROS2_ARM = {"arm_link_sh0", "arm_link_sh1", "arm_link_hr0", "arm_link_el0",
                 "arm_link_el1", "arm_link_wr0", "arm_link_wr1", "arm_link_fngr"}
SPOT_ROS2_FIXED = {"base_link": (0.0, 0.0, 0.0), "front_rail": (0.223, 0.0, 0.0805),
                   "rear_rail": (-0.223, 0.0, 0.0805)}


def model(has_arm: bool, names: str, prefix: str = "") -> yourdfpy.URDF:
    urdf = robot_model.robot_description(has_arm, prefix, names)
    return yourdfpy.URDF.load(io.BytesIO(urdf.encode()), load_meshes=False,
                              build_collision_scene_graph=False)


def test_an_unknown_naming_is_refused_with_the_names_there_are():
    with pytest.raises(ValueError, match="frame_names must be one of spot, spot_ros2, not 'ros'"):
        naming.check("ros")
    with pytest.raises(ValueError):
        robot_model.robot_description(True, "", "ros")


def test_spot_ros2_names_the_arm_as_spot_ros2_and_adds_its_frames():
    spot, ros2 = model(True, "spot"), model(True, "spot_ros2")
    arm = {link for link in ros2.link_map if link.startswith("arm")}
    assert arm == SPOT_ROS2_ARM
    assert not any(link.startswith("arm0.") for link in ros2.link_map)
    assert any(link.startswith("arm0.") for link in spot.link_map)  # the default unchanged
    assert not set(SPOT_ROS2_FIXED) & set(spot.link_map)
    ros2.update_cfg({})
    for frame, xyz in SPOT_ROS2_FIXED.items():
        assert ros2.joint_map[f"{frame}_joint"].type == "fixed"
        assert ros2.get_transform(frame, "body")[:3, 3] == pytest.approx(xyz)
    # the same robot: the same moving joints, the same link poses under either name
    assert spot.actuated_joint_names == ros2.actuated_joint_names
    config = np.linspace(-0.4, 0.4, len(spot.actuated_joint_names))
    spot.update_cfg(config)
    ros2.update_cfg(config)
    for link in spot.link_map:
        np.testing.assert_allclose(ros2.get_transform(naming.published(link, "spot_ros2"),
                                                      "body"),
                                   spot.get_transform(link, "body"), atol=1e-12)
    assert ros2.get_transform("arm_link_hr0", "arm_link_sh1") == pytest.approx(np.eye(4))


def test_without_an_arm_only_the_body_frames_are_added():
    links = set(model(False, "spot_ros2", "spot1/").link_map)
    assert {f"spot1/{frame}" for frame in SPOT_ROS2_FIXED} <= links
    assert not any("arm" in link for link in links)


def test_the_driver_publishes_the_wrist_under_spot_ros2s_name():
    """Without robot_state_publisher the driver's /tf has the robot state's wrist: renamed,
    and nothing under a robot name spot_ros2 does not use; with it, the model's links are
    left to robot_state_publisher whatever their published names."""
    snapshot = build_snapshot(SE3Pose(1, 2, 0.5, Quat()), SE3Pose(0, 0, 0, Quat()), True)
    state = robot_state_view(snapshot)
    for skip, wrist in ((frozenset(), True), (model_frames(), False)):
        pipeline = StatePipeline("odom", "spot1/", skip, "spot_ros2")
        dynamic, static = frames.split_transforms(state, "odom", Time(), "spot1/", skip,
                                                  pipeline.names)
        names = {t.child_frame_id for t in dynamic + static} | {
            t.header.frame_id for t in dynamic + static}
        assert ("spot1/arm_link_wr1" in names) == wrist, names
        assert not any("arm0." in name for name in names)
        serializer = pipeline._kinematics
        tf = deserialize_message(serializer.transforms(_kinematic(state), (1, 0))[0], TFMessage)
        assert {t.child_frame_id for t in tf.transforms} <= names


def _kinematic(snapshot):
    from bosdyn.api import robot_state_pb2
    kin = robot_state_pb2.KinematicState()
    kin.transforms_snapshot.CopyFrom(snapshot)
    return kin


def test_a_hand_camera_hangs_from_spot_ros2s_wrist():
    snapshot = build_snapshot(SE3Pose(0, 0, 0, Quat()), SE3Pose(0, 0, 0, Quat()), True)
    published = []
    mounts = SensorMounts("", {}, published.append,
                          naming.renames("spot_ros2", robot_model.link_names(True)))
    assert mounts.update(sensor_view(snapshot, "hand_color_image_sensor"),
                         "hand_color_image_sensor", robot_model.link_names(True), Time())
    (transform,) = published[-1]
    assert (transform.header.frame_id, transform.child_frame_id) == \
        ("arm_link_wr1", "hand_color_image_sensor")


@pytest.mark.parametrize("names", naming.NAMINGS)
def test_moveit_names_only_links_the_model_has(names):
    """The SRDF rendered for the naming names links of the model rendered for it."""
    links = set(model(True, names, "spot1/").link_map)
    text = (REPO / "spot_description" / "srdf" / "spot.srdf").read_text()
    srdf = ET.fromstring(moveit_config.srdf(text, "spot1/", "odom", names))
    named = {element.get(attribute) for element in srdf.iter()
             for attribute in ("link", "link1", "link2", "base_link", "tip_link",
                               "parent_link", "child_link")
             if element.get(attribute) is not None}
    named |= {element.get("name") for element in srdf.iter("link")}
    assert named and named <= links, named - links


def test_graph_navs_seed_frame_follows_the_naming():
    assert naming.map_frame("spot") == "map"
    assert naming.map_frame("spot_ros2") == "graph_nav_map"


@pytest.mark.parametrize("prefix", ["", "spot1/"])
def test_frames_in_goals_are_turned_back_into_the_robots_names(prefix):
    for link in robot_model.link_names(True):
        published = prefix + naming.published(link, "spot_ros2")
        assert naming.robot_frame(published, prefix, "spot_ros2") == link
        assert naming.robot_frame(prefix + link, prefix, "spot") == link
    assert naming.robot_frame(prefix + "base_link", prefix, "spot_ros2") == "body"
    # names the robot does not know stay, for the caller's "unknown frame" answer
    assert naming.robot_frame(prefix + "front_rail", prefix, "spot_ros2") == "front_rail"
    assert naming.robot_frame(prefix + "arm_link_wr1", prefix, "spot") == "arm_link_wr1"
