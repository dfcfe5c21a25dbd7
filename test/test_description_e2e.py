"""The robot model and the ROS tools' view of a running driver, end to end (simulated Spot with
an arm): robot_description for a late subscriber, its forward kinematics against the driver's
/tf and foot states, REP-2003 QoS for reliable and best-effort subscribers, sensor_msgs
BatteryState, the MoveIt controllers' actions, and every topic and frame the Nav2 and RViz
files name."""

import contextlib
import io
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
import yourdfpy
from bosdyn.client.frame_helpers import get_a_tform_b
from control_msgs.action import FollowJointTrajectory, GripperCommand
from nav_msgs.msg import Odometry
from ros_harness import DriverProcess, RosClient, driver_world, odom_tform
from sensor_msgs.msg import BatteryState, CameraInfo, Image, JointState, PointCloud2
from std_msgs.msg import String
from std_srvs.srv import Trigger
from test_description_units import LEG_NAMES, nav2_topics_and_frames, rviz_topics
from test_nav2_units import bringup, launch_module
from tf2_msgs.msg import TFMessage

from conftest import PASSWORD, USERNAME, part, require_layer, running_sim
from spot_driver.core.action_client import ActionClient
from spot_driver.description import frame_names as naming
from spot_driver.description import nav2_config
from spot_driver.description.robot_model import robot_description
from spot_msgs.msg import FootStateArray
from spot_sim.body.arm.model import Arm

CAMERA_HZ = 10.0
LIDAR_HZ = 5.0


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    best_effort = {"reliable": False}
    with driver_world(tmp_path_factory, "robot_model_test_client", sim={"has_arm": True},
                      params={"auto_claim": "true", "auto_power_on": "true",
                              "auto_stand": "true", "cameras": "[frontleft,frontright]",
                              "camera_rate": CAMERA_HZ, "lidar_rate": LIDAR_HZ,
                              "publish_depth_points": "true"},
                      subscriptions=(("/joint_states", JointState), ("/tf", TFMessage),
                                     ("/odometry", Odometry),
                                     ("/tf_static", TFMessage, {"latched": True}),
                                     ("/status/feet", FootStateArray, best_effort),
                                     ("/battery_state", BatteryState, best_effort)),
                      until=lambda _sim, driver, _ros: "stand: standing" in driver.output()
                      ) as world:
        yield world


def test_late_subscriber_gets_the_robot_description_of_the_connected_robot(world):
    _sim, _driver, ros = world
    time.sleep(1.0)  # sleep: subscribe well after the driver published it (what is tested)
    ros.subscribe("/robot_description", String, latched=True)
    assert ros.wait_for(lambda: ros.latest("/robot_description") is not None, 5)
    urdf = ros.latest("/robot_description").data
    model = yourdfpy.URDF.load(io.BytesIO(urdf.encode()), load_meshes=False,
                               build_collision_scene_graph=False)
    assert "arm_sh0" in model.actuated_joint_names and "hand" in model.link_map


def test_model_forward_kinematics_matches_tf_and_foot_states(world):
    _sim, _driver, ros = world
    ros.subscribe("/robot_description", String, latched=True)
    assert ros.wait_for(lambda: ros.latest("/robot_description") is not None, 5)
    model = yourdfpy.URDF.load(io.BytesIO(ros.latest("/robot_description").data.encode()),
                               load_meshes=False, build_collision_scene_graph=False)
    assert ros.call(Trigger, "/arm/stop").success

    def still() -> bool:  # arm still: joint_states and /tf describe the same pose
        last = ros.next_messages("/joint_states", 2)
        return max(abs(a - b) for a, b in zip(last[0].position, last[1].position,
                                               strict=True)) < 1e-4
    assert ros.wait_for(still, 5.0)
    joints = ros.latest("/joint_states")
    model.update_cfg({n: p for n, p in zip(joints.name, joints.position, strict=True)
                      if n in model.actuated_joint_names})
    body_t_hand_urdf = model.get_transform("hand", "body")
    odom_t_body, odom_t_hand = odom_tform(ros, "body"), odom_tform(ros, "hand")
    body_t_hand_tf = (odom_t_body.inverse() * odom_t_hand).to_matrix()
    assert np.linalg.norm(body_t_hand_urdf[:3, 3] - body_t_hand_tf[:3, 3]) < 0.01
    feet = ros.latest("/status/feet").states
    for leg, foot in zip(LEG_NAMES, feet, strict=True):
        urdf_foot = model.get_transform(f"{leg}_foot", "body")[:3, 3]
        reported = np.array([foot.foot_position_rt_body.x, foot.foot_position_rt_body.y,
                             foot.foot_position_rt_body.z])
        assert np.linalg.norm(urdf_foot - reported) < 0.01, leg


@pytest.mark.parametrize("reliable", [True, False], ids=["reliable", "best-effort"])
def test_default_and_best_effort_subscribers_receive_sensor_streams(world, reliable):
    _sim, _driver, ros = world
    suffix = "" if reliable else " (best effort)"
    topics = {"/camera/frontleft/image": (Image, CAMERA_HZ),
              "/camera/frontleft/camera_info": (CameraInfo, CAMERA_HZ),
              "/lidar/points": (PointCloud2, LIDAR_HZ)}
    subscriptions = [ros.subscribe(topic, msg_type, reliable=reliable)
                     for topic, (msg_type, _) in topics.items()]
    try:
        assert ros.wait_for(lambda: all(ros.received(t) for t in topics), 10), suffix
        start = {t: len(ros.received(t)) for t in topics}
        time.sleep(3.0)  # sleep: the window the rates are measured over
        for topic, (_, hz) in topics.items():
            rate = (len(ros.received(topic)) - start[topic]) / 3.0
            assert rate >= hz / 2, f"{topic}{suffix}: {rate:.1f} Hz of {hz}"  # not halved
    finally:
        for subscription in subscriptions:
            ros.node.destroy_subscription(subscription)
        with ros._lock:
            for topic in topics:
                ros.messages[topic].clear()


def test_battery_as_sensor_msgs_battery_state(world):
    _sim, _driver, ros = world
    assert ros.wait_for(lambda: ros.latest("/battery_state") is not None, 5)
    battery = ros.latest("/battery_state")
    assert 0.0 < battery.percentage <= 1.0 and battery.present
    assert battery.power_supply_status == BatteryState.POWER_SUPPLY_STATUS_DISCHARGING
    assert battery.location  # the battery's identifier


def test_moveit_controller_actions_exist_and_the_gripper_command_works(world):
    sim, _driver, ros = world
    arm = ActionClient(ros.node, FollowJointTrajectory, "/arm_controller/follow_joint_trajectory")
    assert arm.wait_for_server(timeout_sec=5)
    gripper = ActionClient(ros.node, GripperCommand, "/gripper_controller/gripper_cmd")
    assert gripper.wait_for_server(timeout_sec=5)
    goal = GripperCommand.Goal()
    goal.command.position = -1.0  # rad of arm_f1x: mostly open
    handle = ros.wait_future(gripper.send_goal_async(goal))
    assert handle.accepted
    result = ros.wait_future(handle.get_result_async(), timeout=15).result
    assert result.reached_goal and result.position == pytest.approx(-1.0, abs=0.05)
    assert part(sim.robot, Arm).gripper == pytest.approx(-1.0, abs=0.05)


def test_every_topic_and_frame_the_nav2_and_rviz_files_name_exists(world):
    _sim, _driver, ros = world
    nav2_topics, nav2_frames = nav2_topics_and_frames()
    wanted = {"/" + t.lstrip("/") for t in nav2_topics} | rviz_topics()

    def published() -> set[str]:
        return {name for name, _ in ros.node.get_topic_names_and_types()}

    assert ros.wait_for(lambda: wanted <= published(), 10), sorted(wanted - published())
    frames = set()
    for msg in ros.received("/tf_static") + ros.received("/tf")[-20:]:
        for transform in msg.transforms:
            frames.update((transform.header.frame_id, transform.child_frame_id))
    assert nav2_frames <= frames, sorted(nav2_frames - frames)
    assert {"sensor", "frontleft", "frontright"} <= frames  # observation sources' frames
    assert_nav2_bringup_is_served(ros, "")


def graph_topics(ros) -> dict[str, str]:
    return {name: types[0] for name, types in ros.node.get_topic_names_and_types()}


def assert_nav2_bringup_is_served(ros, namespace: str, lidar: bool = True) -> None:
    """Nav2 as our launch renders it for what this driver publishes (point_topics:=auto, read
    from the graph as the launch reads it): every subscription resolved inside its node is
    published with its type, and the collision monitor's output is the driver's cmd_vel."""
    # the launch's own probe of the graph (it waits for the driver's perception node)
    topics, _ = nav2_config.choose_point_topics(
        launch_module()._graph_topics(namespace, 10.0), namespace)
    assert ("lidar/points" in topics) == lidar
    nav2 = bringup(namespace, topics)
    assert not nav2.unmet(graph_topics(ros)), nav2.unmet(graph_topics(ros))
    out = next(t for t in nav2.publications() if t.node.endswith("collision_monitor"))
    readers = ros.node.get_subscriptions_info_by_topic(out.name)
    assert any(r.node_name == "spot_motion" and r.topic_type == out.type for r in readers), \
        (out.name, readers)


def tf_edges(ros) -> dict[str, str]:
    """child -> parent of everything the driver published on /tf_static and lately on /tf;
    fails on a frame given two parents."""
    parents: dict[str, str] = {}
    for msg in ros.received("/tf_static") + ros.received("/tf")[-30:]:
        for t in msg.transforms:
            assert parents.get(t.child_frame_id, t.header.frame_id) == t.header.frame_id, \
                f"{t.child_frame_id}: parents {parents[t.child_frame_id]} and {t.header.frame_id}"
            parents[t.child_frame_id] = t.header.frame_id
    return parents


def rsp_edges(urdf: str) -> dict[str, str]:
    """child -> parent of what robot_state_publisher publishes from ``urdf`` (every joint,
    moving and fixed)."""
    model = yourdfpy.URDF.load(io.BytesIO(urdf.encode()), load_meshes=False,
                               build_collision_scene_graph=False)
    return {joint.child: joint.parent for joint in model.joint_map.values()}


def assert_one_tree(driver: dict[str, str], rsp: dict[str, str], root: str = "odom") -> None:
    both = set(driver) & set(rsp)
    assert not both, f"frames with a parent from both the driver and the model: {sorted(both)}"
    parents = {**driver, **rsp}
    assert {p for p in parents.values() if p not in parents} == {root}
    for frame in parents:
        seen, current = set(), frame
        while current in parents:
            assert current not in seen, f"cycle through {current}"
            seen.add(current)
            current = parents[current]


def test_driver_alone_publishes_one_tree_with_the_cameras_calibrated_mounts(world):
    """No robot_state_publisher (the parameter's default): the driver publishes the robot
    state's frames and the sensors' mounts from the image and point-cloud responses; those
    compose to the simulated robot's true camera poses."""
    sim, _driver, ros = world
    assert ros.wait_for(lambda: {"frontleft_fisheye", "sensor", "body"} <= set(tf_edges(ros)),
                        10)
    parents = tf_edges(ros)
    assert_one_tree(parents, {})
    # as a real Spot (5.x) says
    assert parents["hand"] == "body" and parents["arm0.link_wr1"] == "body"
    assert parents["feet_center"] == "body"
    assert "arm0.link_sh0" not in parents  # the robot state has no links between them
    truth = sim.robot.transforms_snapshot()
    for frame in ("frontleft_fisheye", "frontright", "sensor"):
        body_t_frame = odom_tform(ros, "body").inverse() * odom_tform(ros, frame)
        expected = get_a_tform_b(truth, "body", frame)
        assert np.linalg.norm(body_t_frame.to_matrix() - expected.to_matrix()) < 1e-6, frame


@contextlib.contextmanager
def robot_state_publisher(namespace: str, urdf: str, log_path):
    """The real robot_state_publisher in ``namespace`` started with ``urdf`` as the launch
    file starts it (its parameters from a file). Yields a function returning the model it
    publishes now (it republishes whenever its parameter changes)."""
    params = Path(log_path).with_suffix(".yaml")
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"robot_description": urdf}}}))
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            ["ros2", "run", "robot_state_publisher", "robot_state_publisher", "--ros-args",
             "-r", f"__ns:={namespace}", "--params-file", str(params)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    listener = RosClient("rsp_model_listener")
    listener.subscribe(f"{namespace}/robot_description", String, latched=True)
    try:
        yield lambda: (listener.latest(f"{namespace}/robot_description") or String()).data
    finally:
        listener.close()
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=10) == 0, Path(log_path).read_text()[-2000:]


@pytest.mark.parametrize("frame_names", naming.NAMINGS)
def test_with_robot_state_publisher_every_frame_has_one_owner(tmp_path_factory, frame_names):
    """robot_state_publisher:=true (what the launch file sets when it starts one): the
    driver leaves the model's links to robot_state_publisher and hands it the connected
    robot's model (it starts without the arm); the driver's and its /tf + /tf_static form one
    tree, each frame with one parent. A second robot (namespace and frame prefix ``two``)
    beside the module's driver. The real robot_state_publisher's own output is checked. In
    spot_ros2's frame names too: its arm links, base_link and rails, nothing named
    ``arm0.*``."""
    require_layer("tools", ("robot_state_publisher",))
    wrist = "two/" + naming.published("arm0.link_wr1", frame_names)
    logs = tmp_path_factory.mktemp("logs")
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True, has_lidar=False) as sim, \
            robot_state_publisher("/two", robot_description(False, "two/", frame_names),
                                  logs / "rsp.log") as rsp_model:
        ros = RosClient("one_owner_test_client")
        ros.subscribe("/tf", TFMessage)
        ros.subscribe("/tf_static", TFMessage, latched=True)
        ros.subscribe("/two/robot_description", String, latched=True)
        driver = DriverProcess(sim, logs / "driver.log", USERNAME,
                               PASSWORD, params={"robot_state_publisher": "true",
                                                 "publish_robot_description": "false",
                                                 "frame_prefix": "two/",
                                                 "frame_names": frame_names,
                                                 "cameras": "[frontleft,frontright,hand]",
                                                 "publish_depth_points": "true",
                                                 "enable_choreography": "false"},
                               namespace="/two")

        def ours() -> dict[str, str]:
            return {child: parent for child, parent in tf_edges(ros).items()
                    if child.startswith("two/")}

        try:
            # the driver handed robot_state_publisher the connected robot's model (with arm)
            assert ros.wait_for(lambda: f'"{wrist}"' in rsp_model(), 20), driver.output()
            # the cameras' mounts (latched) and the first odom -> body (on /tf at 50 Hz)
            # and robot_state_publisher's arm links, from the model it was handed
            wanted = {"two/frontleft_fisheye", "two/hand_color_image_sensor", "two/body",
                      wrist, "two/front_left_lower_leg"}
            if frame_names == "spot_ros2":
                wanted |= {"two/base_link", "two/front_rail", "two/rear_rail",
                           "two/arm_link_hr0"}
            assert ros.wait_for(lambda: wanted <= set(ours()), 20), driver.output()
            parents = ours()
            model = rsp_edges(rsp_model())
            assert {c: parents.get(c) for c in model} == model  # it published the model
            assert_one_tree(parents, {}, root="two/odom")
            assert "two/link_wr1" not in parents  # no 4.x alias beside the model's wrist
            assert parents["two/hand_color_image_sensor"] == wrist  # a link of the model
            if frame_names == "spot_ros2":
                assert not [f for f in parents if f.startswith("two/arm0.")]
            latched = {t.child_frame_id for m in ros.received("/tf_static") for t in m.transforms}
            assert not latched & {"two/body", wrist}  # what moves is not latched
            # a robot without the lidar payload, Nav2 in its namespace: depth points and grids
            assert_nav2_bringup_is_served(ros, "two", lidar=False)
        finally:
            ros.close()
            driver.stop()
