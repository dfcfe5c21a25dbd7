"""Nav2 for real (built from upstream Jazzy source: `make nav2-tools`; an apt ROS 2 has it)
against the driver and the simulated robot, started as doc/driver.md says: the driver, then
``ros2 launch spot_driver nav2.launch.py`` (no namespace; ``robot_name:=spot1``; two robots).
Every lifecycle node comes up active; a NavigateToPose goal behind one of the scene's boxes
ends SUCCEEDED with the simulated robot's own pose at the goal, its footprint never in the
box; the local costmap's points layer marks the box (the lidar, or the depth cameras' points
on a robot without one); driven at a box through the collision monitor's input, the robot
slows and stops before it; a goal in ``map`` with GraphNav localized."""

import ast
import itertools
import math
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
import yaml
from lifecycle_msgs.srv import GetState
from nav_msgs.msg import OccupancyGrid, Odometry
from ros_harness import DRIVER_PKG, DriverProcess, LaunchProcess, RosClient, drive, turn_to
from shapely import affinity
from shapely.geometry import Point, Polygon
from shapely.geometry import box as rectangle
from std_srvs.srv import Trigger

from conftest import PASSWORD, USERNAME, require_layer, running_sim
from spot_driver.autonomy import PARAMETERS
from spot_msgs.srv import SetLocalization
from spot_sim.body import mobility
from spot_sim.body.mobility import Se2
from spot_sim.perception.scene import Scene

PARAMS = yaml.safe_load((DRIVER_PKG / "config" / "nav2_params.yaml").read_text())
FOOTPRINT = Polygon(ast.literal_eval(
    PARAMS["local_costmap"]["local_costmap"]["ros__parameters"]["footprint"]))
GOAL_CHECKER = PARAMS["controller_server"]["ros__parameters"]["goal_checker"]
BRAKING_MARGIN = 0.05  # m, rad: what the robot moves after the goal checker's last look
SERVERS = ("controller_server", "smoother_server", "planner_server", "behavior_server",
           "bt_navigator", "waypoint_follower", "velocity_smoother", "collision_monitor")
COSTMAPS = ("local_costmap/local_costmap", "global_costmap/global_costmap")
RED_BOX = next(b for b in Scene().boxes if b.color == (200, 40, 40))  # x 2.2-2.8, y 0.4-1.0
GREEN_BOX = next(b for b in Scene().boxes if b.color == (40, 160, 60))  # x 3-4, y -1.8--1.3
# About 4 m from the start, the box on the straight line, and far enough behind it that the
# robot can turn in place there (test_the_goal_leaves_room_to_turn): at (3.6, 0.7) a robot
# arriving the other way round had no valid turn left (CI, stop 57).
BEHIND_RED = Se2(3.95, 0.7, 0.0)
OBSTACLE_DISTANCE_THRESHOLD = next(p.default for p in PARAMETERS.parameters
                                   if p.name == "obstacle_distance_threshold")


def require_nav2() -> None:
    """Skip (``missing:``) where Nav2 is not installed (an apt ROS 2 has it; here the nav2
    layer)."""
    require_layer("nav2", ("nav2_controller",), ("nav2_msgs.action",))


def box_polygon(box) -> Polygon:
    return rectangle(box.lo[0], box.lo[1], box.hi[0], box.hi[1])


def footprint_at(pose: Se2) -> Polygon:
    turned = affinity.rotate(FOOTPRINT, pose.yaw, origin=(0, 0), use_radians=True)
    return affinity.translate(turned, pose.x, pose.y)


def params_file(tmp: Path) -> Path:
    """config/nav2_params.yaml with the voxel layer's grid published (``voxel_grid``, what
    RViz shows through nav2_costmap_2d's cloud node) and the local costmap sent whole, so the
    test sees what the points marked and what the costmap made of it."""
    text = (DRIVER_PKG / "config" / "nav2_params.yaml").read_text()
    marker = '        plugin: "nav2_costmap_2d::VoxelLayer"\n'
    costmap = "  local_costmap:\n    ros__parameters:\n"
    assert text.count(marker) == 1 and text.count(costmap) == 1
    text = text.replace(marker, marker + "        publish_voxel_map: true\n")
    # the whole grid each time (a standing robot's costmap otherwise comes as updates)
    text = text.replace(costmap, costmap + "      always_send_full_costmap: true\n")
    path = tmp / "nav2_params.yaml"
    path.write_text(text)
    return path


class Robot:
    """One simulated robot, its driver and its Nav2, as a user starts them."""

    def __init__(self, tmp: Path, sim, robot_name: str = "", **driver_params) -> None:
        self.sim, self.name = sim, robot_name
        self.ns = f"/{robot_name}" if robot_name else ""
        self.prefix = f"{robot_name}/" if robot_name else ""
        from nav2_msgs.msg import VoxelGrid
        self.ros = RosClient(f"nav2_test_{robot_name or 'solo'}")
        self.ros.subscribe(f"{self.ns}/local_costmap/voxel_grid", VoxelGrid, latched=True)
        self.ros.subscribe(f"{self.ns}/local_costmap/costmap", OccupancyGrid, latched=True)
        self.driver = DriverProcess(sim, tmp / f"driver{robot_name}.log", USERNAME, PASSWORD,
                                    {"frame_prefix": f'"{self.prefix}"', **driver_params},
                                    namespace=self.ns)
        self.nav2 = None
        self.ros.subscribe(f"{self.ns}/odometry", Odometry)
        assert self.ros.wait_for(lambda: self.ros.latest(f"{self.ns}/odometry") is not None,
                                 timeout=30), self.driver.output()[-3000:]
        try:
            self.ros.ready(("claim", "power_on", "stand"), self.ns)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.driver.output()[-3000:]}") from None
        args = ["spot_driver", "nav2.launch.py", f"params_file:={params_file(tmp)}"]
        if robot_name:
            args.append(f"robot_name:={robot_name}")
        self.nav2 = LaunchProcess(args, tmp / f"nav2{robot_name}.log")

    def states(self) -> dict[str, str]:
        """Each lifecycle node's state label ('' where its get_state service is not offered
        yet: the server is still coming up). A call to an offered service that is not
        answered fails the test: a lost answer is never polled away."""
        out = {}
        for node in (*SERVERS, *COSTMAPS):
            name = f"{self.ns}/{node}/get_state"
            try:
                self.ros.service_client(GetState, name)
            except AssertionError:
                out[node] = ""
                continue
            out[node] = self.ros.call(GetState, name, timeout=5.0).current_state.label
        return out

    def all_active(self, timeout: float) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        while True:
            states = self.states()
            if all(label == "active" for label in states.values()) or \
                    time.monotonic() > deadline:
                return states
            time.sleep(1.0)  # sleep: one lifecycle poll a second (each asks every server)

    def navigate(self, goal: Se2, frame: str = "odom", timeout: float = 120.0):
        """A NavigateToPose goal; its final status and the robot's own path (odom poses at
        every physics tick)."""
        from action_msgs.msg import GoalStatus
        from nav2_msgs.action import NavigateToPose
        request = NavigateToPose.Goal()
        request.pose.header.frame_id = self.prefix + frame
        request.pose.pose.position.x, request.pose.pose.position.y = goal.x, goal.y
        request.pose.pose.orientation.z = math.sin(goal.yaw / 2)
        request.pose.pose.orientation.w = math.cos(goal.yaw / 2)
        path: list[Se2] = []

        def record(robot, _now) -> None:
            path.append(robot.odom_body())

        self.sim.robot.add_step_hook(record)
        try:
            client = self.ros.action_client(NavigateToPose, f"{self.ns}/navigate_to_pose")
            handle = self.ros.wait_future(client.send_goal_async(request), timeout=30)
            assert handle.accepted
            response = self.ros.wait_future(handle.get_result_async(), timeout=timeout)
        finally:
            self.sim.robot.remove_step_hook(record)
        succeeded = response.status == GoalStatus.STATUS_SUCCEEDED
        return succeeded, response.result, path

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU seconds so far of the Nav2 processes the launch started, and of the driver."""
        nav2 = psutil.Process(self.nav2.process.pid).children(recursive=True)
        return cpu_seconds(nav2), cpu_seconds([psutil.Process(self.driver.process.pid)])

    def close(self) -> None:
        if self.nav2 is not None:
            self.nav2.stop()
        self.ros.close()
        self.driver.stop()


def stood_still(sim) -> Se2:
    """The robot's pose once it stands still."""
    deadline = time.monotonic() + 10.0
    while sim.robot.velocity() != Se2() and time.monotonic() < deadline:
        time.sleep(0.05)
    return sim.robot.odom_body()


def assert_at(pose: Se2, goal: Se2) -> None:
    """Within the goal checker's tolerances (and what braking adds)."""
    xy = GOAL_CHECKER["xy_goal_tolerance"] + BRAKING_MARGIN
    yaw = GOAL_CHECKER["yaw_goal_tolerance"] + BRAKING_MARGIN
    assert math.hypot(pose.x - goal.x, pose.y - goal.y) <= xy, (pose, goal)
    assert abs(math.remainder(pose.yaw - goal.yaw, 2 * math.pi)) <= yaw, (pose, goal)


def assert_avoided(path: list[Se2], box) -> None:
    assert path, "the robot's path was not recorded"
    inside = [p for p in path if footprint_at(p).intersects(box_polygon(box))]
    assert not inside, f"the footprint entered the box at {inside[:3]}"


def cpu_seconds(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def marked_columns(grid) -> np.ndarray:
    """(N, 2) x, y of the voxel layer's columns with a marked voxel (nav2_msgs/VoxelGrid:
    per column a uint32, voxel z marked when bits z and z + 16 are both set)."""
    data = np.asarray(grid.data, dtype=np.uint32)
    marked = np.zeros(data.shape, bool)
    for z in range(grid.size_z):
        mask = np.uint32((1 << z) | (1 << (z + 16)))
        marked |= (data & mask) == mask
    rows, cols = np.divmod(np.nonzero(marked)[0], grid.size_x)
    return np.stack([grid.origin.x + (cols + 0.5) * grid.resolutions.x,
                     grid.origin.y + (rows + 0.5) * grid.resolutions.y], axis=1)


def on_box(points: np.ndarray, box, margin: float = 0.1) -> np.ndarray:
    """The rows of ``points`` (x, y) on ``box``, within ``margin``."""
    inside = ((points[:, 0] > box.lo[0] - margin) & (points[:, 0] < box.hi[0] + margin)
              & (points[:, 1] > box.lo[1] - margin) & (points[:, 1] < box.hi[1] + margin))
    return points[inside]


def cost_at(grid: OccupancyGrid, x: float, y: float) -> int:
    info = grid.info
    col = int((x - info.origin.position.x) / info.resolution)
    row = int((y - info.origin.position.y) / info.resolution)
    assert 0 <= col < info.width and 0 <= row < info.height, (x, y)
    return grid.data[row * info.width + col]


# ----------------------------------------------------------------------- one robot, a lidar
@pytest.fixture(scope="class")
def solo(tmp_path_factory):
    require_nav2()
    tmp = tmp_path_factory.mktemp("nav2")
    with running_sim(tmp / "certs", has_lidar=True) as sim:
        robot = Robot(tmp, sim)
        try:
            yield robot
        finally:
            robot.close()


class TestOneRobotWithALidar:
    """No namespace, the lidar: the README's first launch."""

    def test_every_lifecycle_node_comes_up_active(self, solo):
        states = solo.all_active(timeout=90)
        assert all(label == "active" for label in states.values()), \
            (states, solo.nav2.output()[-6000:])
        output = solo.nav2.output()
        assert "Nav2 observes /lidar/points" in output
        assert "Found remap rule" not in output  # the launch's own arguments are not rules


    def test_the_local_costmap_marks_the_box_from_the_lidar(self, solo):
        """The voxel layer (the lidar's points) marks the box, and the costmap has its cells
        lethal."""
        ros = solo.ros
        assert ros.wait_for(lambda: ros.latest("/local_costmap/voxel_grid") is not None and len(
            on_box(marked_columns(ros.latest("/local_costmap/voxel_grid")), RED_BOX)) >= 10,
            timeout=30), "the voxel layer marked nothing on the box"
        assert ros.latest("/local_costmap/voxel_grid").header.frame_id == "odom"

        def lethal() -> list[bool]:  # the marked cells in the costmap (published separately)
            marked = on_box(marked_columns(ros.latest("/local_costmap/voxel_grid")), RED_BOX,
                            margin=0.0)
            grid = ros.latest("/local_costmap/costmap")
            return [cost_at(grid, x, y) == 100 for x, y in marked]

        ros.wait_for(lambda: sum(lethal()) >= 0.9 * len(lethal()), timeout=10)
        assert sum(lethal()) >= 0.9 * len(lethal()), lethal()


    def test_the_goal_leaves_room_to_turn(self):
        """The circle the footprint sweeps turning in place at the goal stays outside what the
        driver's obstacle_distance grid marks occupied (its threshold and one costmap cell)."""
        cell = PARAMS["local_costmap"]["local_costmap"]["ros__parameters"]["resolution"]
        swept = Point(BEHIND_RED.x, BEHIND_RED.y).buffer(
            max(math.hypot(x, y) for x, y in FOOTPRINT.exterior.coords))
        clearance = swept.distance(box_polygon(RED_BOX))
        assert clearance > OBSTACLE_DISTANCE_THRESHOLD + cell, clearance


    def test_a_goal_behind_a_box_is_reached_around_it(self, solo):
        start = solo.sim.robot.odom_body()
        straight = Polygon([(start.x, start.y), (BEHIND_RED.x, BEHIND_RED.y),
                            (BEHIND_RED.x, BEHIND_RED.y + 0.01)])
        assert straight.intersects(box_polygon(RED_BOX))  # the box is in the way
        before = solo.cpu_seconds()
        started = time.monotonic()
        succeeded, result, path = solo.navigate(BEHIND_RED)
        took = time.monotonic() - started
        after = solo.cpu_seconds()
        assert succeeded, (result, solo.nav2.output()[-6000:])
        assert_at(stood_still(solo.sim), BEHIND_RED)
        assert_avoided(path, RED_BOX)
        walked = sum(math.hypot(b.x - a.x, b.y - a.y) for a, b in itertools.pairwise(path))
        print(f"goal {took:.1f} s, walked {walked:.2f} m; CPU: Nav2 {after[0] - before[0]:.1f} s, "
              f"driver {after[1] - before[1]:.1f} s")


    def test_the_collision_monitor_stops_the_robot_before_a_box(self, solo):
        """Facing the green box, 0.4 m/s into the monitor's input (cmd_vel_smoothed): the
        approach polygon slows the robot and it stops with its footprint short of the box."""
        from geometry_msgs.msg import Twist
        from nav2_msgs.msg import CollisionMonitorState
        sim, ros = solo.sim, solo.ros
        turn_to(ros, sim.robot, math.pi)  # back from the goal to in front of the box
        drive(ros, sim.robot, vx=0.3, distance=sim.robot.odom_body().x - 3.5)
        here = sim.robot.odom_body()
        assert GREEN_BOX.lo[0] + 0.3 < here.x < GREEN_BOX.hi[0] - 0.3, here
        turn_to(ros, sim.robot, -math.pi / 2)
        ros.subscribe("/collision_monitor_state", CollisionMonitorState)
        publisher = ros.publisher(Twist, "/cmd_vel_smoothed", 10)
        command = Twist()
        command.linear.x = 0.4
        speeds, path = [], []
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline:
            publisher.publish(command)
            speeds.append(sim.robot.velocity().x)
            path.append(sim.robot.odom_body())
            if len(speeds) > 40 and max(speeds) > 0.2 and all(abs(v) < 1e-3 for v in speeds[-20:]):
                break
            time.sleep(0.05)
        states = ros.received("/collision_monitor_state")
        publisher.publish(Twist())
        ros.node.destroy_publisher(publisher)
        assert max(speeds) > 0.2, "the robot never moved"
        assert all(abs(v) < 1e-3 for v in speeds[-20:]), "it did not stop"
        assert_avoided(path, GREEN_BOX)
        gap = footprint_at(path[-1]).distance(box_polygon(GREEN_BOX))
        assert gap < 0.4, f"stopped {gap:.2f} m short: held back, not approaching"
        assert any(s.action_type == CollisionMonitorState.APPROACH
                   and s.polygon_name == "FootprintApproach" for s in states), states[-3:]
        drive(ros, sim.robot, vx=-0.3, distance=0.8)  # out of the box's inflation again


    def test_a_goal_in_the_map_frame_with_graph_nav_localized(self, solo):
        sim, ros = solo.sim, solo.ros
        started = ros.call(Trigger, "/graph_nav/recording/start")
        assert started.success, started.message
        waypoint = started.message.rsplit(" ", 1)[-1]
        seed = sim.robot.odom_body()  # the map's origin: the first waypoint of the recording
        assert ros.call(Trigger, "/graph_nav/recording/stop").success
        localized = ros.call(SetLocalization, "/graph_nav/set_localization",
                             SetLocalization.Request(method=SetLocalization.Request.WAYPOINT,
                                                     waypoint_id=waypoint))
        assert localized.success, localized.message
        goal_odom = Se2(1.2, -0.4, math.pi)
        goal_map = mobility.compose(mobility.inverse(seed), goal_odom)
        assert math.hypot(goal_map.x - goal_odom.x, goal_map.y - goal_odom.y) > 1.0  # not odom
        succeeded, result, _path = solo.navigate(goal_map, frame="map")
        assert succeeded, (result, solo.nav2.output()[-6000:])
        assert_at(stood_still(sim), goal_odom)


# ------------------------------------------------- robot_name:=spot1, no lidar: depth points
@pytest.fixture(scope="class")
def depth_only(tmp_path_factory):
    require_nav2()
    tmp = tmp_path_factory.mktemp("nav2_depth")
    with running_sim(tmp / "certs", has_lidar=False) as sim:
        robot = Robot(tmp, sim, "spot1", publish_depth_points="true")
        try:
            yield robot
        finally:
            robot.close()


class TestRobotNameWithoutALidar:
    """``robot_name:=spot1`` on a robot without a lidar: depth points alone."""

    def test_without_a_lidar_the_same_goal_on_depth_points_alone(self, depth_only):
        robot = depth_only
        states = robot.all_active(timeout=90)
        assert all(label == "active" for label in states.values()), \
            (states, robot.nav2.output()[-6000:])
        output = robot.nav2.output()
        assert "/spot1/depth/frontleft/points" in output and "lidar" not in output.split(
            "Nav2 observes", 1)[1].split("\n", 1)[0]
        topic = "/spot1/local_costmap/voxel_grid"
        assert robot.ros.wait_for(lambda: robot.ros.latest(topic) is not None and len(
            on_box(marked_columns(robot.ros.latest(topic)), RED_BOX)) >= 10, 30)
        assert robot.ros.latest(topic).header.frame_id == "spot1/odom"
        succeeded, result, path = robot.navigate(BEHIND_RED)
        assert succeeded, (result, robot.nav2.output()[-6000:])
        assert_at(stood_still(robot.sim), BEHIND_RED)
        assert_avoided(path, RED_BOX)


# -------------------------------------------------------- two robots: spot1 and spot2 at once
@pytest.fixture(scope="class")
def pair(tmp_path_factory):
    require_nav2()
    tmp = tmp_path_factory.mktemp("nav2_pair")
    with running_sim(tmp / "certs1", has_lidar=True) as sim1, \
            running_sim(tmp / "certs2", has_lidar=True) as sim2:
        robots = []
        try:
            for name, sim in (("spot1", sim1), ("spot2", sim2)):
                robots.append(Robot(tmp, sim, name))
                # One bring-up at a time, as robots with their own computers would not share
                # cores: two at once on these 2 cores once aborted one (a lifecycle node
                # missed its bond). The test then checks both active side by side.
                robots[-1].all_active(timeout=120)
            yield robots
        finally:
            for robot in robots:  # both launches stop at once: each waits for its servers
                if robot.nav2 is not None:
                    robot.nav2.signal_group()
            for robot in robots:
                robot.close()


class TestTwoRobots:
    """spot1 and spot2 at once, each with its Nav2."""

    def test_two_robots_each_with_its_nav2(self, pair):
        """Both bring-ups (started one after the other) active side by side, each on its own
        robot's topics and frames: its local costmap in its own odom with its own box marked,
        its collision monitor feeding its own driver's cmd_vel. (No goal here: two Nav2s, two
        drivers and two simulated lidars saturate these 2 cores, where a goal's planner
        missed the BT's 250 ms to accept it; on robots each Nav2 has its own payload
        computer.)"""
        for robot in pair:
            states = robot.all_active(timeout=120)
            assert all(label == "active" for label in states.values()), \
                (robot.name, states, robot.nav2.output()[-6000:])
        for robot in pair:
            ros, topic = robot.ros, f"{robot.ns}/local_costmap/voxel_grid"
            assert ros.wait_for(lambda ros=ros, topic=topic: ros.latest(topic) is not None
                                and len(on_box(marked_columns(ros.latest(topic)), RED_BOX)) >= 10,
                                timeout=30), robot.name
            assert ros.latest(topic).header.frame_id == f"{robot.name}/odom"
            feeding = {(p.node_namespace, p.node_name)
                       for p in ros.node.get_publishers_info_by_topic(f"{robot.ns}/cmd_vel")}
            assert feeding == {(robot.ns, "collision_monitor")}, (robot.name, feeding)
