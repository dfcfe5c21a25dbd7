"""doc/migration.md against a running driver (every capability on, a robot with an arm and a
Spot CAM): each name in its "here" column is offered with the type the page gives, and with
``spot_ros2_aliases:=true`` spot_ros2's names work end to end (ROS client -> alias -> the
driver's own interface -> gRPC -> simulated robot)."""

import time

import doc_pages
import pytest
from migration_page import NONE, interfaces
from ros_harness import DriverProcess, RosClient, burst
from sensor_msgs.msg import CompressedImage, PointCloud2
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from conftest import PASSWORD, USERNAME, part, running_sim
from spot_msgs.msg import BatteryStateArray
from spot_msgs.srv import ListWorldObjects, SetStandHeight
from spot_sim.body.arm.model import Arm
from spot_sim.body.legs import Legs

ALIAS_TOPICS = {"/status/battery_states": (BatteryStateArray, False, False),
                "/status/has_arm": (Bool, True, True),
                "/camera/frontleft/compressed": (CompressedImage, True, False),
                "/velodyne/points": (PointCloud2, True, False)}  # type, reliable, latched


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True, has_spot_cam=True) as sim:
        ros = RosClient("migration_test_client")
        for topic, (msg_type, reliable, latched) in ALIAS_TOPICS.items():
            ros.subscribe(topic, msg_type, reliable=reliable, latched=latched)
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log",
                               USERNAME, PASSWORD,
                               params={"enable_low_level": "true",
                                       "enable_spot_ros2_aliases": "true",
                                       "publish_depth_registered": "true",
                                       "publish_depth_points": "true",
                                       "publish_depth_registered_points": "true",
                                       "publish_stitched_front": "true",
                                       "cameras": "[frontleft]"})
        # the joint-level streams' process, as `low_level:=true` starts it beside the driver
        streams = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "low_level.log",
                                USERNAME, PASSWORD, module="spot_driver.low_level")
        try:
            assert ros.wait_for(lambda: ros.latest("/status/battery_states") is not None, 30), \
                driver.output()
            yield sim, ros
        finally:
            ros.close()
            streams.stop()
            driver.stop()


def offered(ros, row) -> bool:
    """Whether the graph has the row's name here with its type (an action by its goal
    service)."""
    name = "/" + row.ours
    if "/msg/" in row.our_type:
        found = dict(ros.node.get_topic_names_and_types())
        return row.our_type in found.get(name, [])
    found = dict(ros.node.get_service_names_and_types())
    if "/action/" in row.our_type:
        return f"{row.our_type}_SendGoal" in found.get(f"{name}/_action/send_goal", [])
    return row.our_type in found.get(name, [])


def test_every_name_here_is_offered_with_the_type_the_page_gives(world):
    _, ros = world
    rows = [row for row in interfaces() if row.ours != NONE]
    deadline = time.monotonic() + 20  # discovery of every endpoint of the driver
    while (missing := [r for r in rows if not offered(ros, r)]) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not missing, "\n".join(f"{r.ours} ({r.our_type}) for {r.theirs}" for r in missing)


def test_aliased_topics_carry_the_driver_data(world):
    _, ros = world
    for topic in ALIAS_TOPICS:
        assert ros.wait_for(lambda t=topic: ros.latest(t) is not None, 15), topic
    assert ros.latest("/status/has_arm").data is True
    assert ros.latest("/camera/frontleft/compressed").format.endswith("jpeg compressed mono8")


def test_aliased_services_reach_the_robot(world):
    sim, ros = world
    ros.ready(("claim", "power_on", "stand"))
    unstowed = ros.call(Trigger, "/arm_unstow")
    assert unstowed.success, unstowed.message
    assert not part(sim.robot, Arm).stowed
    opened = ros.call(Trigger, "/open_gripper")
    assert opened.success, opened.message
    arm = part(sim.robot, Arm)  # the robot's own arm (not rebuilt while it runs)
    assert ros.wait_for(lambda: arm.gripper < -1.4, 5), arm.gripper
    closed = ros.call(Trigger, "/close_gripper")
    assert closed.success, closed.message
    stowed = ros.call(Trigger, "/arm_stow")
    assert stowed.success, stowed.message
    assert part(sim.robot, Arm).stowed
    lower = ros.call(SetStandHeight, "/set_stand_height", SetStandHeight.Request(height=-0.1))
    assert lower.success, lower.message
    assert ros.wait_for(
        lambda: part(sim.robot, Legs).height_offset == pytest.approx(-0.1, abs=0.01), 5)
    bad = ros.call(SetStandHeight, "/set_stand_height",
                   SetStandHeight.Request(height=float("nan")))
    assert not bad.success and "finite" in bad.message, bad.message  # our checks, passed on
    listed = ros.call(ListWorldObjects, "/list_world_objects", ListWorldObjects.Request())
    assert listed.success, listed.message



def test_aliases_answer_every_caller_of_a_burst(world):
    """Hundreds of callers at once through an alias all get an answer: a passed-through call
    holds no executor thread while it waits for ours (blocking ones answered 12 of 100)."""
    _, ros = world
    listed, _ = burst(ros, ListWorldObjects, "/list_world_objects", 100, 60.0)
    assert all(answer is not None and answer.success for answer in listed), \
        sum(answer is None for answer in listed)
    closed, _ = burst(ros, Trigger, "/close_gripper", 50, 60.0)
    assert all(answer is not None for answer in closed), sum(a is None for a in closed)
    assert any(answer.success for answer in closed)

PARAMETER_SERVICES = ("describe_parameters", "get_parameter_types", "get_parameters",
                      "list_parameters", "set_parameters", "set_parameters_atomically",
                      "get_type_description")
EVERY_NODE = {"/rosout", "/parameter_events"}
PER_SOURCE = ("frontleft", "frontright", "left", "right", "back", "hand", "ptz", "ir")


def test_doc_driver_names_every_topic_service_and_action_of_the_driver(world):
    """The interface tables of doc/driver.md are typed by hand; this keeps them from drifting:
    every topic, service and action the running driver offers is named there (a camera's as
    `camera/<name>/...`, a status topic as `status/x` or, in a list, `x`)."""
    _, ros = world
    names = {n for n, _ in ros.node.get_topic_names_and_types() if "/_action/" not in n}
    for name, _ in ros.node.get_service_names_and_types():
        if name.endswith("/_action/send_goal"):
            names.add(name[:-len("/_action/send_goal")])
        elif "/_action/" not in name and not name.endswith(PARAMETER_SERVICES):
            names.add(name)
    documented = doc_pages.code_names("driver")

    def named(name: str) -> bool:
        relative = name.lstrip("/")
        forms = {name, relative, relative.removeprefix("status/")}
        forms |= {relative.replace(f"/{source}/", f"/{pattern}/") for source in PER_SOURCE
                  for pattern in ("<name>", "<c>", "<camera>")}
        return bool(forms & documented)

    assert len(names) > 150
    assert sorted(n for n in names - EVERY_NODE if not named(n)) == []
