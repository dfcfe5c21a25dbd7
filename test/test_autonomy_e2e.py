"""End to end: GraphNav, recording, local grids and Autowalk through ROS -> driver -> gRPC ->
simulated Spot, in the order a user works: record a map by driving with cmd_vel, download it,
clear, upload, localize to the fiducial, navigate (to a waypoint, along a route, cancel), check
``map -> odom -> body`` on /tf against the localization, play a walk built from the map, and
see bad requests refused with nothing sent to the robot."""

import math
import shutil
from pathlib import Path

import pytest
from bosdyn.api.autowalk import walks_pb2
from bosdyn.api.graph_nav import map_pb2
from bosdyn.client.math_helpers import SE3Pose
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import OccupancyGrid
from ros_harness import DriverProcess, RosClient, burst, drive, odom_tform, tf_pose, turn_to
from sensor_msgs.msg import PointCloud2
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from conftest import PASSWORD, USERNAME, holds, running_sim
from spot_msgs.action import Mission, NavigateRoute, NavigateTo
from spot_msgs.msg import LocalGrid
from spot_msgs.srv import (
    CreateWaypoint,
    DownloadCaptures,
    ListCaptures,
    MapDirectory,
    SetLocalization,
)
from spot_sim.body import mobility
from spot_sim.body.mobility import Se2

LEG = 1.5  # m between recorded waypoints


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs")) as sim:
        ros = RosClient("graph_nav_test_client")
        ros.subscribe("/graph_nav/graph", MarkerArray, latched=True)
        ros.subscribe("/graph_nav/cloud", PointCloud2, latched=True)
        ros.subscribe("/graph_nav/localization", PoseWithCovarianceStamped)
        ros.subscribe("/tf", TFMessage)
        ros.subscribe("/tf_static", TFMessage, latched=True)
        ros.subscribe("/diagnostics", DiagnosticArray)
        ros.subscribe("/local_grids/obstacle_distance", OccupancyGrid)
        ros.subscribe("/local_grids/terrain", LocalGrid)
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log",
                               USERNAME, PASSWORD,
                               params={"localization_rate": 10.0, "local_grid_rate": 4.0,
                                       "navigation_command_window": 2.0,
                                       "enable_perception": False})
        try:  # a failed setup must not leave its driver running beside later tests
            assert ros.wait_for(lambda: ros.received("/tf"), timeout=30), driver.output()
            try:
                ros.ready(("claim", "power_on", "stand"))
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{driver.stacks()[-12000:]}") from None
            yield sim, driver, ros, tmp_path_factory.mktemp("maps")
        finally:
            ros.close()
            driver.stop()


def map_dir_graph(directory) -> map_pb2.Graph:
    return map_pb2.Graph.FromString((directory / "graph").read_bytes())


def seed_pose(graph: map_pb2.Graph, waypoint_id: str) -> SE3Pose:
    (anchor,) = [a for a in graph.anchoring.anchors if a.id == waypoint_id]
    return SE3Pose.from_proto(anchor.seed_tform_waypoint)


def localization(ros):
    return ros.latest("/graph_nav/localization").pose.pose.position


@pytest.fixture(scope="module")
def recorded(world):
    """Drive a U (forward, left, forward, left, forward) while recording; the map directory,
    its waypoint ids in the order made, and where the simulated robot stood (odom) at each."""
    sim, _driver, ros, maps = world
    started = ros.call(Trigger, "/graph_nav/recording/start")
    assert started.success, started.message
    ids = [started.message.rsplit(" ", 1)[-1]]
    stood = [sim.robot.odom_body()]
    heading = sim.robot.odom_body().yaw
    for turns in range(3):
        if turns:
            heading += math.pi / 2
            turn_to(ros, sim.robot, heading)
        drive(ros, sim.robot, vx=0.5, distance=LEG)
        made = ros.call(CreateWaypoint, "/graph_nav/recording/create_waypoint",
                        CreateWaypoint.Request(name=f"leg{len(ids)}"))
        assert made.success, made.message
        ids.append(made.waypoint_id)
        stood.append(sim.robot.odom_body())
    assert ros.call(Trigger, "/graph_nav/recording/stop").success
    directory = maps / "recorded"
    downloaded = ros.call(MapDirectory, "/graph_nav/download_map",
                          MapDirectory.Request(directory=str(directory)))
    assert downloaded.success, downloaded.message
    return directory, ids, stood


def test_recording_by_cmd_vel_makes_a_map_drawn_for_rviz(world, recorded):
    _sim, _driver, ros, _maps = world
    directory, ids, stood = recorded
    graph = map_dir_graph(directory)
    assert len(graph.waypoints) >= 4
    assert [w.id for w in graph.waypoints][:1] == ids[:1] and set(ids) <= {
        w.id for w in graph.waypoints}
    assert len(list((directory / "waypoint_snapshots").iterdir())) == len(graph.waypoints)
    # Each waypoint sits where the robot stood when it was made, seen from the first one.
    for waypoint_id, pose in zip(ids, stood, strict=True):
        seed = seed_pose(graph, waypoint_id)
        truth = mobility.compose(mobility.inverse(stood[0]), pose)
        assert (seed.x, seed.y) == pytest.approx((truth.x, truth.y), abs=0.05), waypoint_id
    corner = seed_pose(graph, ids[2])
    assert corner.x > LEG - 0.3 and corner.y > LEG - 0.3  # the U's far corner

    def drawn(count):
        markers = ros.latest("/graph_nav/graph")
        spheres = [m for m in markers.markers if m.ns == "waypoints"] if markers else []
        return bool(spheres) and len(spheres[0].points) == count

    assert ros.wait_for(lambda: drawn(len(graph.waypoints)), timeout=10)
    cloud = ros.latest("/graph_nav/cloud")
    assert cloud.header.frame_id == "map" and cloud.width > 1000


def test_clear_upload_and_refusals_before_localizing(world, recorded):
    sim, _driver, ros, maps = world
    directory, ids, _stood = recorded
    assert ros.call(Trigger, "/graph_nav/clear_map").success
    assert not sim.graph_nav.map.graph.waypoints
    assert ros.wait_for(lambda: not [m for m in ros.latest("/graph_nav/graph").markers
                                     if m.ns == "waypoints"], timeout=10)

    # Bad map directories: refused, the robot's (empty) map untouched.
    missing = ros.call(MapDirectory, "/graph_nav/upload_map",
                       MapDirectory.Request(directory=str(maps / "absent")))
    assert not missing.success and "not found" in missing.message
    corrupt = maps / "corrupt"
    shutil.copytree(directory, corrupt)
    (corrupt / "graph").write_bytes(b"\xff\xff\xff\xff")
    refused = ros.call(MapDirectory, "/graph_nav/upload_map",
                       MapDirectory.Request(directory=str(corrupt)))
    assert not refused.success and "not a Graph" in refused.message
    incomplete = maps / "incomplete"
    shutil.copytree(directory, incomplete)
    next((incomplete / "waypoint_snapshots").iterdir()).unlink()
    refused = ros.call(MapDirectory, "/graph_nav/upload_map",
                       MapDirectory.Request(directory=str(incomplete)))
    assert not refused.success and "missing" in refused.message
    assert not sim.graph_nav.map.graph.waypoints

    uploaded = ros.call(MapDirectory, "/graph_nav/upload_map",
                        MapDirectory.Request(directory=str(directory)))
    assert uploaded.success, uploaded.message
    assert uploaded.waypoints == len(map_dir_graph(directory).waypoints)

    tasks = len(sim.graph_nav.tasks)
    result = ros.run_action(NavigateTo, "/graph_nav/navigate_to",
                            NavigateTo.Goal(waypoint_id=ids[0]))
    assert not result.success and "not localized" in result.message
    result = ros.run_action(NavigateTo, "/graph_nav/navigate_to",
                 NavigateTo.Goal(waypoint_id="no-such-waypoint"))
    assert not result.success and "unknown waypoint" in result.message
    result = ros.run_action(NavigateRoute, "/graph_nav/navigate_route", NavigateRoute.Goal())
    assert not result.success and "route is empty" in result.message
    assert len(sim.graph_nav.tasks) == tasks  # nothing reached the robot


def test_localize_to_fiducial_then_navigate(world, recorded):
    _sim, _driver, ros, _maps = world
    directory, ids, _stood = recorded
    graph = map_dir_graph(directory)
    bad = ros.call(SetLocalization, "/graph_nav/set_localization",
                   SetLocalization.Request(method=SetLocalization.Request.WAYPOINT,
                                           waypoint_id="nope"))
    assert not bad.success and "unknown waypoint" in bad.message
    localized = ros.call(SetLocalization, "/graph_nav/set_localization",
                         SetLocalization.Request(method=SetLocalization.Request.FIDUCIAL_NEAREST))
    assert localized.success, localized.message
    assert localized.waypoint_id == ids[-1]  # still standing where recording ended

    def diagnosed():
        return any("graph_nav localization" in s.name and "localized at" in s.message
                   for msg in ros.received("/diagnostics")[-5:] for s in msg.status)

    assert ros.wait_for(diagnosed, timeout=5)

    feedback = []
    result = ros.run_action(NavigateTo, "/graph_nav/navigate_to",
                 NavigateTo.Goal(waypoint_id=ids[0]), feedback=feedback)
    assert result.success, result.message
    assert result.status == "STATUS_REACHED_GOAL" and result.completed_waypoints[-1] == ids[0]
    assert feedback[0].remaining_route_length > 1.0
    goal = seed_pose(graph, ids[0])
    assert ros.wait_for(lambda: math.hypot(localization(ros).x - goal.x,
                                           localization(ros).y - goal.y) < 0.2, timeout=3)

    result = ros.run_action(NavigateRoute, "/graph_nav/navigate_route",
                 NavigateRoute.Goal(waypoint_ids=ids[:3]))
    assert result.success, result.message
    assert list(result.completed_waypoints) == ids[:3]
    goal = seed_pose(graph, ids[2])
    assert math.hypot(localization(ros).x - goal.x, localization(ros).y - goal.y) < 0.2

    skipping = ros.run_action(NavigateRoute, "/graph_nav/navigate_route",
                   NavigateRoute.Goal(waypoint_ids=[ids[0], ids[2]]))
    assert not skipping.success and "no edge joins" in skipping.message


def test_local_grids_show_the_box_near_the_robot(world, recorded):
    _sim, _driver, ros, _maps = world
    # The robot stands at the U's second corner (1.5, 1.5): the red box (2.2..2.8,
    # 0.4..1.0, 0.8 m tall) is inside the 3.84 m grid.
    assert ros.wait_for(lambda: ros.latest("/local_grids/obstacle_distance") is not None
                        and ros.latest("/local_grids/terrain") is not None, timeout=5)
    grid = ros.latest("/local_grids/obstacle_distance")
    assert grid.header.frame_id == "odom" and grid.info.width == grid.info.height == 128
    origin, res = grid.info.origin.position, grid.info.resolution

    def cell(data, x, y):
        return data[int((x - origin.x) / res) + grid.info.width * int((y - origin.y) / res)]

    assert cell(grid.data, 2.5, 0.7) == 100
    assert cell(grid.data, 1.5, 1.5) == 0
    terrain = ros.latest("/local_grids/terrain")
    heights = terrain.data
    t_origin = terrain.origin.position
    index = int((2.5 - t_origin.x) / terrain.resolution) + terrain.width * int(
        (0.7 - t_origin.y) / terrain.resolution)
    assert heights[index] == pytest.approx(0.8, abs=1e-3)


def test_cancel_mid_route_stops_the_robot(world, recorded):
    sim, _driver, ros, _maps = world
    _directory, ids, _stood = recorded
    feedback = []
    result = ros.run_action(NavigateRoute, "/graph_nav/navigate_route",
                 NavigateRoute.Goal(waypoint_ids=[ids[2], ids[1], ids[0]]), feedback=feedback,
                 cancel_when=lambda f: 0 < f.remaining_route_length < 2.5)
    assert "canceled" in result.message
    assert ros.wait_for(lambda: sim.robot.velocity().x == 0.0, timeout=1.0)
    stopped_at = sim.robot.odom_body()
    assert holds(lambda: math.hypot(sim.robot.odom_body().x - stopped_at.x,
                                    sim.robot.odom_body().y - stopped_at.y) < 0.01, 0.5)


def test_navigate_to_the_last_waypoint_then_map_odom_body_equals_the_localization(
        world, recorded):
    sim, _driver, ros, _maps = world
    directory, ids, _stood = recorded
    result = ros.run_action(NavigateTo, "/graph_nav/navigate_to",
                 NavigateTo.Goal(waypoint_id=ids[-1]))
    assert result.success, result.message
    goal = seed_pose(map_dir_graph(directory), ids[-1])
    assert ros.wait_for(lambda: math.hypot(localization(ros).x - goal.x,
                                           localization(ros).y - goal.y) < 0.2, timeout=3)
    # standing still, and messages from then on: every source describes the same instant
    assert ros.wait_for(lambda: sim.robot.velocity() == Se2(), timeout=5.0)
    ros.next_messages("/tf", 5)
    ros.next_messages("/graph_nav/localization", 1)

    def map_tform_odom():
        for msg in reversed(ros.received("/tf")):
            for t in msg.transforms:
                if t.child_frame_id == "odom":
                    assert t.header.frame_id == "map"
                    return tf_pose(t.transform)
        return None

    assert ros.wait_for(lambda: map_tform_odom() is not None, timeout=3)
    composed = map_tform_odom() * odom_tform(ros, "body")
    localized = ros.latest("/graph_nav/localization").pose.pose
    assert math.hypot(composed.x - localized.position.x, composed.y - localized.position.y,
                      composed.z - localized.position.z) < 0.01
    parents = {t.child_frame_id: t.header.frame_id for msg in ros.received("/tf")[-50:]
               for t in msg.transforms}
    assert parents.get("body") == "odom" and parents.get("odom") == "map"  # one tree


def test_walk_built_from_the_map_plays_through_the_mission_action(world, recorded):
    sim, _driver, ros, maps = world
    directory, ids, _stood = recorded
    walk_dir = maps / "inspection.walk"
    shutil.copytree(directory, walk_dir)
    walk = walks_pb2.Walk(mission_name="inspection", map_name="recorded")
    for index, waypoint_id in enumerate((ids[2], ids[0])):
        element = walk.elements.add(name=f"stop {index}")
        element.target.navigate_to.destination_waypoint_id = waypoint_id
        element.action.sleep.duration.FromNanoseconds(200_000_000)
    capture = walk.elements[1].action.data_acquisition  # the second stop captures
    for name in ("robot-state", "frontleft_fisheye_image"):
        if name.endswith("_image"):
            capture.acquire_data_request.acquisition_requests.image_captures.add(
                image_service="image").image_request.image_source_name = name
        else:
            capture.acquire_data_request.acquisition_requests.data_captures.add(name=name)
    (walk_dir / "missions").mkdir()
    (walk_dir / "missions" / "autogenerated.walk").write_bytes(walk.SerializeToString())
    feedback = []
    result = ros.run_action(Mission, "/mission", Mission.Goal(mission_file=str(walk_dir)),
                 timeout=90, feedback=feedback)
    assert result.success, result.message
    assert result.status == "STATUS_SUCCESS"
    assert sim.graph_nav.localization(sim.robot).waypoint_id == ids[0]
    # The walk's captures are in the robot's store, listed and downloaded through ROS.
    listed = ros.call(ListCaptures, "/data_acquisition/list_captures",
                      ListCaptures.Request(group_name="inspection"))
    assert listed.success and sorted((c.action_name, c.channel) for c in listed.captures) == [
        ("stop 1", "frontleft_fisheye_image"), ("stop 1", "robot-state")]
    got = ros.call(DownloadCaptures, "/data_acquisition/download",
                   DownloadCaptures.Request(directory=str(maps / "captures"),
                                            group_name="inspection"))
    assert got.success, got.message
    assert sorted(Path(f).name for f in got.files) == [
        "stop 1_frontleft_fisheye_image.jpg", "stop 1_robot-state.json"]

    broken = maps / "broken.walk"
    shutil.copytree(walk_dir, broken)
    (broken / "missions" / "autogenerated.walk").write_bytes(b"\xff\xff")
    tasks = len(sim.graph_nav.tasks)
    result = ros.run_action(Mission, "/mission", Mission.Goal(mission_file=str(broken)))
    assert not result.success and "not an Autowalk" in result.message
    assert len(sim.graph_nav.tasks) == tasks


def test_navigate_to_a_pose_in_the_map_and_localize_from_a_guess(world, recorded):
    sim, _driver, ros, _maps = world
    directory, ids, _stood = recorded
    graph = map_dir_graph(directory)
    target = seed_pose(graph, ids[1])
    goal = NavigateTo.Goal()
    goal.goal_pose.header.frame_id = "map"
    goal.goal_pose.pose.position.x, goal.goal_pose.pose.position.y = target.x - 0.4, target.y
    goal.goal_pose.pose.orientation.w = 1.0
    result = ros.run_action(NavigateTo, "/graph_nav/navigate_to", goal)
    assert result.success, result.message
    assert ros.wait_for(lambda: math.hypot(localization(ros).x - (target.x - 0.4),
                                           localization(ros).y - target.y) < 0.1, timeout=3)

    tasks = len(sim.graph_nav.tasks)
    goal.goal_pose.pose.position.x = float("nan")
    refused = ros.run_action(NavigateTo, "/graph_nav/navigate_to", goal)
    assert not refused.success and "finite" in refused.message
    goal.goal_pose.pose.position.x = target.x
    goal.goal_pose.header.frame_id = "odom"
    refused = ros.run_action(NavigateTo, "/graph_nav/navigate_to", goal)
    assert not refused.success and "must be in 'map'" in refused.message
    assert len(sim.graph_nav.tasks) == tasks

    # A guess 0.2 m off is refined to where the robot is; a guess 3 m off is refused.
    guess = SetLocalization.Request(method=SetLocalization.Request.WAYPOINT,
                                    waypoint_id=ids[1])
    guess.waypoint_tform_body.position.x = -0.4 + 0.2
    guess.waypoint_tform_body.orientation.w = 1.0
    fixed = ros.call(SetLocalization, "/graph_nav/set_localization", guess)
    assert fixed.success and fixed.waypoint_id == ids[1], fixed.message
    guess.waypoint_tform_body.position.x = 3.0
    refused = ros.call(SetLocalization, "/graph_nav/set_localization", guess)
    assert not refused.success and "STATUS_FAILED" in refused.message


def test_a_burst_of_callers_is_answered(world, recorded):
    _sim, _driver, ros, _maps = world
    _directory, ids, _stood = recorded
    request = SetLocalization.Request(method=SetLocalization.Request.FIDUCIAL_NEAREST)
    responses, elapsed = burst(ros, SetLocalization, "/graph_nav/set_localization", 50, 30.0,
                               request)
    assert all(r is not None and r.success and r.waypoint_id in ids for r in responses)
    assert elapsed < 15.0, elapsed
