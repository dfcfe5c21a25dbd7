"""What Nav2's controller does with the driver, played by a small Python stand-in (Nav2 cannot
run here): read the robot's pose from /tf and its speed from odometry, check the path on a
costmap made from the robot's own obstacle grid (local_grids/obstacle_distance, as the local
costmap's static layer takes it), and drive with cmd_vel to a goal; the robot reaches it, and
stops when cmd_vel stops."""

import math
import time

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import OccupancyGrid, Odometry
from ros_harness import DriverProcess, RosClient, odom_tform
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from conftest import PASSWORD, USERNAME, running_sim

GOAL_DISTANCE = 1.5  # m
TOLERANCE = 0.15  # m, Nav2's xy_goal_tolerance in config/nav2_params.yaml
MAX_SPEED, MAX_TURN = 0.5, 0.5  # m/s, rad/s


def cost_at(grid: OccupancyGrid, x: float, y: float) -> int:
    """The grid's value at odom (x, y): 0 free, 100 occupied, -1 unknown or outside."""
    info = grid.info
    col = int((x - info.origin.position.x) / info.resolution)
    row = int((y - info.origin.position.y) / info.resolution)
    if not (0 <= col < info.width and 0 <= row < info.height):
        return -1
    return grid.data[row * info.width + col]


def path_is_free(grid: OccupancyGrid, start, goal) -> bool:
    steps = max(2, int(math.dist(start, goal) / 0.05))
    return all(cost_at(grid, *np.add(start, np.subtract(goal, start) * i / steps)) == 0
               for i in range(steps + 1))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs")) as sim:
        ros = RosClient("nav2_standin_client")
        ros.subscribe("/odometry", Odometry)
        ros.subscribe("/tf", TFMessage)
        ros.subscribe("/tf_static", TFMessage, latched=True)
        ros.subscribe("/local_grids/obstacle_distance", OccupancyGrid)
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log", USERNAME,
                               PASSWORD, {"enable_perception": "false",
                                          "enable_choreography": "false",
                                          "local_grid_rate": 4.0})
        try:
            assert ros.wait_for(lambda: ros.latest("/local_grids/obstacle_distance")
                                is not None, 30), driver.output()
            for name in ("claim", "power_on", "stand"):
                response = ros.call(Trigger, f"/{name}")
                assert response.success, (name, response.message)
            yield sim, driver, ros
        finally:
            ros.close()
            driver.stop()


def test_a_controller_loop_drives_spot_to_a_goal_on_the_local_grid_and_it_stops(world):
    _sim, _driver, ros = world
    pose = odom_tform(ros, "body")
    start = (pose.x, pose.y)
    grid = ros.latest("/local_grids/obstacle_distance")
    assert grid.header.frame_id == "odom" and grid.info.resolution > 0
    heading = pose.rot.to_yaw()
    goal = None
    for turn in (0.0, math.pi / 2, -math.pi / 2, math.pi):  # the first free direction
        candidate = (start[0] + GOAL_DISTANCE * math.cos(heading + turn),
                     start[1] + GOAL_DISTANCE * math.sin(heading + turn))
        if path_is_free(grid, start, candidate):
            goal = candidate
            break
    assert goal is not None, "no free direction on the robot's obstacle grid"

    publisher = ros.publisher(Twist, "/cmd_vel", 10)
    deadline = time.monotonic() + 30.0
    try:
        while time.monotonic() < deadline:
            pose = odom_tform(ros, "body")
            dx, dy = goal[0] - pose.x, goal[1] - pose.y
            distance = math.hypot(dx, dy)
            if distance < TOLERANCE:
                break
            grid = ros.latest("/local_grids/obstacle_distance")
            reach = min(1.0, 0.5 / distance)  # the next half metre of the path
            ahead = (pose.x + dx * reach, pose.y + dy * reach)
            assert path_is_free(grid, (pose.x, pose.y), ahead), "obstacle on the path"
            yaw = pose.rot.to_yaw()
            bearing = math.atan2(dy, dx) - yaw
            bearing = math.atan2(math.sin(bearing), math.cos(bearing))
            speed = min(MAX_SPEED, distance)
            command = Twist()  # in the body frame, as Nav2's controller commands Spot
            command.linear.x = speed * math.cos(bearing)
            command.linear.y = speed * math.sin(bearing)
            command.angular.z = max(-MAX_TURN, min(MAX_TURN, bearing))
            publisher.publish(command)
            time.sleep(0.1)
        pose = odom_tform(ros, "body")
        assert math.dist((pose.x, pose.y), goal) < TOLERANCE + 0.05, (pose.x, pose.y, goal)
    finally:
        ros.node.destroy_publisher(publisher)
    # cmd_vel stopped: the driver's watchdog (cmd_duration) lets the robot stop by itself
    def stopped() -> bool:
        twist = ros.latest("/odometry").twist.twist
        return math.hypot(twist.linear.x, twist.linear.y) < 0.05 and abs(twist.angular.z) < 0.05
    assert ros.wait_for(stopped, 1.5)
    settled = odom_tform(ros, "body")
    assert math.dist((settled.x, settled.y), goal) < TOLERANCE + 0.1
