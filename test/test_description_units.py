"""The robot model and the files for the ROS tools, checked without the tools: the URDF expands
for every variant and agrees with the simulated robot's kinematics and the driver's limits;
the MoveIt, Nav2 and RViz files name only what the model and the driver have; package.xml
declares every ROS package the code and launch files use."""

import ast
import io
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml
import yourdfpy

from spot_driver.description import robot_model, rviz_config
from spot_driver.description.config_files import rendered_file
from spot_driver.manipulation import arm_trajectory
from spot_driver.state.joint_states import urdf_joint_name
from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as arm_kinematics

REPO = Path(__file__).resolve().parent.parent
DRIVER_PKG = REPO / "spot_driver"  # the spot_driver package\'s folder
LEG_NAMES = ("front_left", "front_right", "rear_left", "rear_right")
# ROS packages used by name (launch Node(package=...)) or not registered in the wheels' index.
ROS_BY_NAME = {"launch", "launch_ros", "xacro", "robot_state_publisher", "rviz2",
               "moveit_ros_move_group", "ament_index_python"}


def load(has_arm: bool, prefix: str = "") -> yourdfpy.URDF:
    urdf = robot_model.robot_description(has_arm, prefix)
    return yourdfpy.URDF.load(io.BytesIO(urdf.encode()), load_meshes=False,
                              build_collision_scene_graph=False)


def sim_joint_names(has_arm: bool) -> list[str]:
    names = list(kinematics.LEG_JOINTS) + (list(kinematics.ARM_JOINTS) if has_arm else [])
    return [urdf_joint_name(n) for n in names]


@pytest.mark.parametrize("has_arm,prefix", [(False, ""), (True, ""), (True, "spot1/")])
def test_urdf_expands_and_every_reported_joint_is_a_movable_joint(has_arm, prefix):
    model = load(has_arm, prefix)
    assert model.validate()
    actuated = set(model.actuated_joint_names)
    expected = {prefix + name for name in sim_joint_names(has_arm)}
    assert actuated == expected
    links = set(model.link_map)
    assert prefix + "body" in links
    for frame in ("head", "frontleft", "frontleft_fisheye", "sensor", "hand_color_image_sensor"):
        assert prefix + frame not in links  # sensor mounts: the driver's, from the robot
    assert (prefix + "hand" in links) == has_arm
    assert all(name.startswith(prefix) for name in links)


def test_joint_limits_are_those_the_driver_validates():
    model = load(True)
    for name, (low, high) in zip(arm_trajectory.URDF_ARM_JOINTS, arm_trajectory.LIMITS,
                                 strict=True):
        limit = model.joint_map[name].limit
        assert (limit.lower, limit.upper) == pytest.approx((low, high))
    gripper = model.joint_map[arm_trajectory.URDF_GRIPPER_JOINT].limit
    assert (gripper.lower, gripper.upper) == pytest.approx((arm_trajectory.GRIPPER_OPEN, 0.0))
    np.testing.assert_allclose(arm_trajectory.LIMITS, arm_kinematics.JOINT_LIMITS)
    legs = robot_model.geometry()["legs"]["limits"]
    for leg in LEG_NAMES:
        for joint in ("hip_x", "hip_y", "knee"):
            expected = legs[joint] if joint == "hip_x" else legs[joint][leg]
            limit = model.joint_map[f"{leg}_{joint}"].limit
            assert (limit.lower, limit.upper) == pytest.approx(tuple(expected))


def test_standing_and_sitting_poses_of_the_simulator_are_within_the_model_limits():
    model = load(True)
    for height in (kinematics.SIT_HEIGHT, kinematics.STAND_HEIGHT):
        q = kinematics.leg_joint_positions(height)
        for name, value in zip(sim_joint_names(False), q, strict=True):
            limit = model.joint_map[name].limit
            assert limit.lower <= value <= limit.upper, (name, value)


def test_urdf_forward_kinematics_equals_the_simulated_robot(seed=3):
    """One source of truth: feet, arm links, hand and cameras from the URDF (yourdfpy) and from
    the simulator's own kinematics agree for random joint angles."""
    model = load(True)
    rng = np.random.default_rng(seed)
    names = sim_joint_names(True)
    for _ in range(25):
        legs = np.concatenate([[rng.uniform(-0.7, 0.7), rng.uniform(-0.8, 2.2),
                                rng.uniform(-2.7, -0.3)] for _ in LEG_NAMES])
        arm = rng.uniform(arm_kinematics.JOINT_LIMITS[:, 0], arm_kinematics.JOINT_LIMITS[:, 1])
        model.update_cfg(dict(zip(names, [*legs, *arm, -0.5], strict=True)))
        feet = np.array([model.get_transform(f"{leg}_foot", "body")[:3, 3]
                         for leg in LEG_NAMES])
        np.testing.assert_allclose(feet, kinematics.foot_positions_in_body(legs), atol=1e-9)
        sim_links = arm_kinematics.link_poses(arm)
        for link, pose in zip((*arm_kinematics.LINKS, "hand"), sim_links, strict=True):
            np.testing.assert_allclose(model.get_transform(link, "body"), pose, atol=1e-9)


# ---------------------------------------------------------------------------------- MoveIt
def test_moveit_files_name_only_what_the_model_has():
    model = load(True)
    srdf = ET.parse(REPO / "spot_description" / "srdf" / "spot.srdf").getroot()
    links, joints = set(model.link_map), set(model.joint_map)
    for chain in srdf.iter("chain"):
        assert chain.get("base_link") in links and chain.get("tip_link") in links
    for element in srdf.iter("joint"):
        assert element.get("name") in joints, element.get("name")
    for element in srdf.iter("disable_collisions"):
        assert element.get("link1") in links and element.get("link2") in links
    for element in srdf.iter("end_effector"):
        assert element.get("parent_link") in links
    for element in srdf.iter("passive_joint"):
        assert element.get("name") in joints
    controllers = yaml.safe_load((DRIVER_PKG / "config/moveit/moveit_controllers.yaml").read_text())
    manager = controllers["moveit_simple_controller_manager"]
    for name in manager["controller_names"]:
        for joint in manager[name]["joints"]:
            assert joint in model.actuated_joint_names
    limits = yaml.safe_load((DRIVER_PKG / "config/moveit/joint_limits.yaml").read_text())
    assert set(limits["joint_limits"]) == {j for j in model.actuated_joint_names
                                           if j.startswith("arm_")}
    assert yaml.safe_load((DRIVER_PKG / "config/moveit/kinematics.yaml").read_text())["arm"]


# ---------------------------------------------------------------------------------- Nav2
def _footprint(text: str) -> np.ndarray:
    return np.array(yaml.safe_load(text), dtype=float)


def test_nav2_footprint_covers_the_model_and_velocities_are_within_the_clamps():
    nav2 = yaml.safe_load((DRIVER_PKG / "config" / "nav2_params.yaml").read_text())
    model = load(True)
    standing = dict(zip(sim_joint_names(False),
                        kinematics.leg_joint_positions(kinematics.STAND_HEIGHT), strict=True))
    standing.update(zip([f"arm_{j}" for j in ("sh0", "sh1", "el0", "el1", "wr0", "wr1")],
                        arm_kinematics.STOW, strict=True))
    model.update_cfg(standing)
    corners = []
    for name, link in model.link_map.items():
        for visual in link.visuals:
            if visual.geometry.box is None:
                continue
            pose = model.get_transform(name, "body") @ (
                visual.origin if visual.origin is not None else np.eye(4))
            half = np.array(visual.geometry.box.size) / 2
            for signs in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3):
                corners.append((pose @ np.append(signs * half, 1.0))[:2])
    low, high = np.min(corners, axis=0), np.max(corners, axis=0)
    for costmap in ("local_costmap", "global_costmap"):
        params = nav2[costmap][costmap]["ros__parameters"]
        footprint = _footprint(params["footprint"])
        assert np.all(footprint.min(axis=0) <= low) and np.all(footprint.max(axis=0) >= high)
        assert np.all(footprint.max(axis=0) - high <= 0.15)  # not much larger than the robot
        assert params["robot_base_frame"] == "flat_body"  # body at rest: the same outline
    driver = yaml.safe_load((DRIVER_PKG / "config" / "spot_driver.yaml").read_text())
    clamps = driver["/**"]["ros__parameters"]
    dwb = nav2["controller_server"]["ros__parameters"]["FollowPath"]
    assert dwb["max_vel_x"] <= clamps["max_linear_velocity_x"]
    assert dwb["max_vel_y"] <= clamps["max_linear_velocity_y"]
    assert dwb["max_vel_theta"] <= clamps["max_angular_velocity_z"]
    assert nav2["velocity_smoother"]["ros__parameters"]["max_velocity"] <= [
        clamps["max_linear_velocity_x"], clamps["max_linear_velocity_y"],
        clamps["max_angular_velocity_z"]]


def nav2_topics_and_frames() -> tuple[set[str], set[str]]:
    """Every topic and frame the Nav2 example names (checked against a running driver in
    test_description_e2e)."""
    nav2 = yaml.safe_load((DRIVER_PKG / "config" / "nav2_params.yaml").read_text())
    topics, frames = set(), set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("topic", "odom_topic") and isinstance(value, str):
                    topics.add(value)
                elif key.endswith("frame") and isinstance(value, str):
                    frames.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(nav2)
    return topics, frames


def rviz_topics() -> set[str]:
    """The topics RViz shows, resolved in a robot without namespace."""
    return {"/" + t for t in rviz_config.topics((DRIVER_PKG / "rviz" / "spot.rviz").read_text())
            if t != "goal_pose"}


def test_rviz_follows_the_robot_name():
    """Relative topics (RViz runs in the robot's namespace), frames with the robot's prefix,
    and displays that use only fields the driver publishes (its clouds are x, y, z only)."""
    template = (DRIVER_PKG / "rviz" / "spot.rviz").read_text()
    assert all(not topic.startswith("/") for topic in rviz_config.topics(template))
    config = yaml.safe_load(rviz_config.render(template, "spot1/", "vision"))
    manager = config["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "spot1/vision"
    assert manager["Views"]["Current"]["Target Frame"] == "spot1/body"
    for display in manager["Displays"]:
        if display["Class"].endswith("PointCloud2"):
            assert display["Color Transformer"] in ("AxisColor", "FlatColor"), display["Name"]


def test_rviz_across_a_link_takes_the_compressed_images():
    """Payload network modes and operator.launch.py: image displays on the robot's JPEG
    (image_transport reads the transport from the topic's last name); the rest unchanged."""
    template = (DRIVER_PKG / "rviz" / "spot.rviz").read_text()
    local = rviz_config.topics(rviz_config.render(template, "spot1/"))
    remote = rviz_config.topics(rviz_config.render(template, "spot1/", compressed=True))
    assert "camera/frontleft/image" in local
    assert remote == local - {"camera/frontleft/image"} | {"camera/frontleft/image/compressed"}
    launch = (DRIVER_PKG / "launch" / "operator.launch.py").read_text()
    assert "compressed=True" in launch and "additional_env=env" in launch


# ---------------------------------------------------------------------------------- package.xml
def _ament_packages() -> set[str]:
    found = set()
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        index = Path(prefix) / "share" / "ament_index" / "resource_index" / "packages"
        if index.is_dir():
            found.update(p.name for p in index.iterdir())
    return found


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


# Each package's sources: its Python package and its launch files.
PACKAGES = ("spot_common", "spot_driver", "spot_sim", "spot_driver_examples")


def _sources(package: str) -> list[Path]:
    folder = REPO / package
    return [*sorted((folder / package).rglob("*.py")), *sorted(folder.glob("launch/*.py"))]


def _declared(package: str, tags: tuple[str, ...]) -> set[str]:
    root = ET.parse(REPO / package / "package.xml").getroot()
    return {e.text for e in root if e.tag in tags}


@pytest.mark.parametrize("package", PACKAGES)
def test_package_xml_declares_every_ros_package_used(package):
    declared = _declared(package, ("depend", "exec_depend", "build_depend"))
    ros = _ament_packages() | ROS_BY_NAME | set(PACKAGES) | {"spot_msgs"}
    used = set()
    for path in _sources(package):
        used |= _imports(path) & ros
        used |= set(re.findall(r'package="([a-z0-9_]+)"', path.read_text()))
    used.discard(package)
    assert used, "no ROS package found: is AMENT_PREFIX_PATH set (scripts/env.sh)?"
    assert used <= declared, f"{package}/package.xml lacks {sorted(used - declared)}"
    if package == "spot_driver":
        assert {"rclpy", "control_msgs", "trajectory_msgs", "robot_state_publisher"} <= used
    assert "spot_sim" not in declared or package != "spot_driver"  # the driver never needs it


# Third-party Python modules the packages and their launch files import, as rosdep keys; the
# pip-only ones are named in package.xml's comment and the README.
ROSDEP_KEYS = {"numpy": "python3-numpy", "yaml": "python3-yaml", "grpc": "python3-grpcio",
               "cryptography": "python3-cryptography", "transforms3d": "python3-transforms3d",
               "scipy": "python3-scipy", "jwt": "python3-jwt", "google": "python3-protobuf",
               "PIL": "python3-pil"}
PIP_ONLY = {"bosdyn", "simplejpeg"}


@pytest.mark.parametrize("package", PACKAGES)
def test_package_xml_declares_every_python_dependency(package):
    declared = _declared(package, ("depend", "exec_depend"))
    comment = (REPO / package / "package.xml").read_text()
    ros = _ament_packages() | ROS_BY_NAME | set(PACKAGES) | {"spot_msgs"}
    third_party = set().union(*(_imports(path) for path in _sources(package))) \
        - ros - set(sys.stdlib_module_names)
    assert third_party <= set(ROSDEP_KEYS) | PIP_ONLY, sorted(third_party)
    for module in third_party - PIP_ONLY:
        assert ROSDEP_KEYS[module] in declared, f"{package}/package.xml lacks {ROSDEP_KEYS[module]}"
    for module in PIP_ONLY & third_party:
        assert module.replace("bosdyn", "bosdyn-client") in comment, (package, module)
    if package == "spot_driver":
        assert "moveit_ros_visualization" in declared  # the MoveIt RViz option


def test_rendered_file_holds_the_rendering_for_the_prefix(tmp_path):
    template = tmp_path / "tool.yaml"
    template.write_text("frame: body\n")
    path = rendered_file(str(template), lambda text, prefix: text.replace("body",
                                                                          prefix + "body"),
                         "spot1/", ".yaml")
    assert Path(path).read_text() == "frame: spot1/body\n" and path.endswith(".yaml")
    Path(path).unlink()
