"""Our Nav2 launch and parameters against Nav2 Jazzy's own requirements, encoded below and in
``nav2_rules.py`` from upstream source (ros-navigation/navigation2 tag 1.3.13, rclcpp 28.1,
rcl 9.2): Nav2 cannot run on this machine, so this is what stops a file of ours that Nav2
would refuse at bring-up, or that would leave a node without its parameters or a costmap
without its sensors, in every launch configuration the README offers (no namespace,
``robot_name``, two robots)."""

import importlib.util

import pytest
from nav2_rules import GRID, ODOMETRY, POINTS, Bringup, matches, node_entries, parameters_for
from ros_harness import DRIVER_PKG

from spot_driver.description import nav2_config

# nav2_bringup/launch/navigation_launch.py (1.3.13): its lifecycle nodes, the package and
# executable of each, and its remappings.
# nav2_bringup's navigation_launch.py: executable (use_composition:=False) and component
# plugin (True) of each node, and its remappings.
UPSTREAM = {
    "controller_server": ("nav2_controller", "controller_server", {"cmd_vel": "cmd_vel_nav"},
                          "nav2_controller::ControllerServer"),
    "smoother_server": ("nav2_smoother", "smoother_server", {}, "nav2_smoother::SmootherServer"),
    "planner_server": ("nav2_planner", "planner_server", {}, "nav2_planner::PlannerServer"),
    "route_server": ("nav2_route", "route_server", {}, "nav2_route::RouteServer"),
    "behavior_server": ("nav2_behaviors", "behavior_server", {"cmd_vel": "cmd_vel_nav"},
                        "behavior_server::BehaviorServer"),
    "velocity_smoother": ("nav2_velocity_smoother", "velocity_smoother",
                          {"cmd_vel": "cmd_vel_nav"}, "nav2_velocity_smoother::VelocitySmoother"),
    "collision_monitor": ("nav2_collision_monitor", "collision_monitor", {},
                          "nav2_collision_monitor::CollisionMonitor"),
    "bt_navigator": ("nav2_bt_navigator", "bt_navigator", {}, "nav2_bt_navigator::BtNavigator"),
    "waypoint_follower": ("nav2_waypoint_follower", "waypoint_follower", {},
                          "nav2_waypoint_follower::WaypointFollower"),
    "docking_server": ("opennav_docking", "opennav_docking", {},
                       "opennav_docking::DockingServer"),
}
UPSTREAM_MANAGER = ("nav2_lifecycle_manager", "lifecycle_manager", {},
                    "nav2_lifecycle_manager::LifecycleManager")
# The topics that chain them (velocity_smoother.cpp, collision_monitor defaults): the
# smoother publishes cmd_vel_smoothed; the collision monitor reads it and publishes cmd_vel.
SMOOTHER_OUTPUT = "cmd_vel_smoothed"
# Parameters declared without a default (Nav2 fails to configure without them):
# collision_monitor_node.cpp: polygons, <polygon>.type, observation_sources; polygon.cpp:
# <polygon>.action_type, and <polygon>.points or (approach) footprint_topic or
# polygon_sub_topic; costmap_2d_ros.cpp and the servers' plugin lists (nav2_util::
# get_plugin_type_param): <id>.plugin for every id of a list that is not the default list.
PLUGIN_LISTS = {
    "controller_server": ("controller_plugins", "progress_checker_plugins",
                          "goal_checker_plugins"),
    "planner_server": ("planner_plugins",), "smoother_server": ("smoother_plugins",),
    "behavior_server": ("behavior_plugins",), "bt_navigator": ("navigators",),
}
COSTMAP_DEFAULT_PLUGINS = ["static_layer", "obstacle_layer", "inflation_layer"]
# Frame parameters with a default Spot does not have (base_link, base_footprint, map):
# bt_navigator.cpp, behavior_server.cpp (local_frame default odom), nav2_smoother.cpp,
# collision_monitor_node.cpp, costmap_2d_ros.cpp.
FRAME_PARAMETERS = {
    "bt_navigator": ("global_frame", "robot_base_frame"),
    "behavior_server": ("local_frame", "global_frame", "robot_base_frame"),
    "smoother_server": ("robot_base_frame",),
    "collision_monitor": ("base_frame_id", "odom_frame_id"),
    "local_costmap": ("global_frame", "robot_base_frame"),
    "global_costmap": ("global_frame", "robot_base_frame"),
}


def launch_module():
    spec = importlib.util.spec_from_file_location("nav2_launch",
                                                  DRIVER_PKG / "launch" / "nav2.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TEMPLATE = (DRIVER_PKG / "config" / "nav2_params.yaml").read_text()
CONFIGURATIONS = ("", "spot1")  # the README's: no namespace, robot_name:=spot1
# what the driver publishes for Nav2, relative to its namespace (checked against a running
# driver in test_description_e2e)
DRIVER = {"odometry": ODOMETRY, "local_grids/obstacle_distance": GRID,
          **{topic: POINTS for topic in nav2_config.POINT_TOPICS}}


def bringup(robot_name: str = "", point_topics=None) -> Bringup:
    """The launch's rendering for ``robot_name`` (namespace = robot_name, as the launch)."""
    prefix = f"{robot_name}/" if robot_name else ""
    text = nav2_config.render(TEMPLATE, prefix, robot_name, point_topics)
    return Bringup(text, robot_name, launch_module().NODES)


def driver_topics(namespace: str, relative=DRIVER) -> dict[str, str]:
    return {nav2_config.absolute(topic, namespace): kind for topic, kind in relative.items()}


def test_the_rules_match_rclcpps_and_rcls_own_cases():
    """The encoded rules against the cases rclcpp's and rcl's tests state."""
    text = "a:\n  b:\n    ros__parameters:\n      x: {y: 1}\n'/**':\n  ros__parameters: {z: 2}\n"
    assert node_entries(text) == [("a/b", {"x.y": 1}), ("/**", {"z": 2})]
    assert matches("a/b", "/a/b") and not matches("b", "/a/b")
    assert matches("/**", "/a/b") and matches("/**/b", "/a/b") and matches("/*/b", "/a/b")
    assert not matches("/*/b", "/a/c/b") and matches("/**/b", "/a/c/b")
    assert parameters_for(text, "/a/b") == {"x.y": 1, "z": 2}
    assert parameters_for(text, "/c") == {"z": 2}


def test_every_upstream_node_is_started_as_upstream_starts_it_or_left_out_with_a_reason():
    launch = launch_module()
    started = {server.name: (server.package, server.executable, server.remaps, server.plugin)
               for server in launch.NODES}
    assert set(started) | set(launch.NOT_STARTED) == set(UPSTREAM)
    assert not set(started) & set(launch.NOT_STARTED)
    for name, spec in started.items():
        assert spec == UPSTREAM[name], name
    assert all(reason for reason in launch.NOT_STARTED.values())
    manager = launch.MANAGER
    assert (manager.package, manager.executable, manager.remaps, manager.plugin) == \
        UPSTREAM_MANAGER


@pytest.mark.parametrize("robot_name", CONFIGURATIONS)
def test_every_started_node_receives_what_nav2_requires(robot_name):
    """Through rclcpp's matching of the node's full name (with a namespace the file as given
    reaches no node)."""
    nav2 = bringup(robot_name)
    for name in [server.name for server in launch_module().NODES] + ["local_costmap",
                                                                      "global_costmap"]:
        assert nav2.params(name), f"{nav2.node_fqn(name)} receives no parameters"
    monitor = nav2.params("collision_monitor")
    assert monitor["cmd_vel_in_topic"] == SMOOTHER_OUTPUT and monitor["cmd_vel_out_topic"] == \
        "cmd_vel"  # the driver's cmd_vel comes out of the collision monitor
    assert monitor["polygons"] and monitor["observation_sources"]
    for polygon in monitor["polygons"]:
        assert monitor[f"{polygon}.type"] in ("polygon", "circle", "velocity_polygon")
        assert monitor[f"{polygon}.action_type"] in ("stop", "slowdown", "limit", "approach")
        assert f"{polygon}.points" in monitor or f"{polygon}.polygon_sub_topic" in monitor or (
            monitor[f"{polygon}.action_type"] == "approach"
            and f"{polygon}.footprint_topic" in monitor)
    for source in monitor["observation_sources"]:
        assert monitor[f"{source}.type"] in ("scan", "pointcloud", "range", "polygon")
        assert monitor[f"{source}.topic"]
    for node, lists in PLUGIN_LISTS.items():
        params = nav2.params(node)
        for key in lists:
            for plugin_id in params.get(key, []):
                assert params[f"{plugin_id}.plugin"], (node, plugin_id)
    for costmap in ("local_costmap", "global_costmap"):
        params = nav2.params(costmap)
        for layer in params.get("plugins", COSTMAP_DEFAULT_PLUGINS):
            assert params[f"{layer}.plugin"], (costmap, layer)


@pytest.mark.parametrize("robot_name", CONFIGURATIONS)
def test_every_subscription_resolves_to_a_topic_that_is_published(robot_name):
    """Resolved inside the node that subscribes (a costmap layer in <ns>/<costmap>)."""
    nav2 = bringup(robot_name)
    assert not nav2.unmet(driver_topics(robot_name)), nav2.unmet(driver_topics(robot_name))
    layers = [t for t in nav2.subscriptions() if t.node.endswith("costmap")]
    assert {t.type for t in layers} == {GRID, POINTS}
    assert all(t.name.startswith(f"/{robot_name}/" if robot_name else "/") for t in layers)


def test_two_robots_see_only_their_own_topics_and_frames():
    one, two = bringup("spot1"), bringup("spot2")
    for nav2, name in ((one, "spot1"), (two, "spot2")):
        topics = nav2.subscriptions() + nav2.publications()
        assert all(t.name.startswith(f"/{name}/") and t.node.startswith(f"/{name}/")
                   for t in topics), [t for t in topics if not t.name.startswith(f"/{name}/")]
        for node in [server.name for server in launch_module().NODES]:
            for key, value in nav2.params(node).items():
                if key.rpartition(".")[2] in nav2_config.FRAME_KEYS:
                    assert value.startswith(f"{name}/"), (node, key, value)
        assert not nav2.unmet(driver_topics(name))
    assert not {t.node for t in one.subscriptions()} & {t.node for t in two.subscriptions()}


def test_every_frame_parameter_of_a_started_node_is_spots():
    """Frame parameters with an upstream default (base_link, map) are set: Spot has neither."""
    nav2 = bringup("spot1")
    for node, keys in FRAME_PARAMETERS.items():
        params = nav2.params(node)
        for key in keys:
            assert params.get(key, "").startswith("spot1/"), (node, key)


@pytest.mark.parametrize("point_topics", [{"lidar/points"}, {"depth/frontleft/points",
                                                              "depth/frontright/points"}])
def test_only_published_point_clouds_are_observed(point_topics):
    """A robot without the lidar payload navigates on depth points and the obstacle grid; the
    collision monitor waits for no topic the driver does not publish."""
    nav2 = bringup("spot1", point_topics)
    published = {**{t: k for t, k in DRIVER.items() if k != POINTS},
                 **{t: POINTS for t in point_topics}}
    assert not nav2.unmet(driver_topics("spot1", published))
    monitor = nav2.params("collision_monitor")
    assert {monitor[f"{s}.topic"] for s in monitor["observation_sources"]} == point_topics
    local = nav2.params("local_costmap")
    assert "grid_layer" in local["plugins"]


def test_the_sources_are_chosen_from_the_graph_and_the_wait_is_said():
    graph = {"/spot1/odometry", "/spot1/depth/frontleft/points",
             "/spot1/depth/frontright/points", "/spot2/lidar/points"}
    topics, sentence = nav2_config.choose_point_topics(graph, "spot1")
    assert topics == {"depth/frontleft/points", "depth/frontright/points"}
    assert "/spot1/depth/frontleft/points" in sentence
    topics, sentence = nav2_config.choose_point_topics({"/spot1/odometry"}, "spot1")
    assert topics and "holds every command until" in sentence
    assert "publish_depth_points:=true" in sentence
    with pytest.raises(ValueError, match="collision monitor needs"):
        nav2_config.render(TEMPLATE, "", "", set())


def test_spots_frames_and_the_local_grids_with_matching_qos():
    nav2 = bringup()
    for node in ("bt_navigator", "behavior_server", "local_costmap", "global_costmap",
                 "smoother_server"):
        assert nav2.params(node)["robot_base_frame"] == "flat_body"  # gravity-aligned
    assert nav2.params("collision_monitor")["base_frame_id"] == "flat_body"
    for costmap in ("local_costmap", "global_costmap"):
        params = nav2.params(costmap)
        grid_layers = [layer for layer in params["plugins"]
                       if params[f"{layer}.plugin"] == "nav2_costmap_2d::StaticLayer"]
        assert grid_layers, f"the {costmap} does not use the robot's obstacle grid"
        for layer in grid_layers:
            assert params[f"{layer}.map_topic"] == "/local_grids/obstacle_distance"
            # the driver publishes local grids volatile (qos.STATE): a transient-local
            # subscriber would never match
            assert params[f"{layer}.map_subscribe_transient_local"] is False


def test_the_voxel_grid_reaches_every_height_it_is_asked_to_mark():
    """voxel_layer.cpp: the grid spans z_voxels x z_resolution from origin_z (at most 16
    voxels); anything above is silently not marked."""
    local = bringup().params("local_costmap")
    for layer in local["plugins"]:
        if local[f"{layer}.plugin"] != "nav2_costmap_2d::VoxelLayer":
            continue
        assert local[f"{layer}.z_voxels"] <= 16
        top = local.get(f"{layer}.origin_z", 0.0) + (local[f"{layer}.z_voxels"]
                                                     * local[f"{layer}.z_resolution"])
        heights = [local[f"{layer}.max_obstacle_height"]] + [
            local[f"{layer}.{s}.max_obstacle_height"]
            for s in local[f"{layer}.observation_sources"].split()]
        assert max(heights) <= top + 1e-9, (layer, heights, top)


def test_the_controller_stops_rotating_in_place_only_inside_the_goal_checkers_tolerance():
    """dwb_critics/rotate_to_goal.cpp: inside ``<controller>.xy_goal_tolerance`` (default
    0.25 m) DWB only turns in place; the goal checker (``goal_checker.xy_goal_tolerance``)
    ends the goal. A DWB tolerance wider than the checker's leaves the robot turning short of
    the goal until the progress checker aborts it (seen with the real Nav2: 0.22 m short)."""
    controller = bringup().params("controller_server")
    checker = controller["goal_checker.xy_goal_tolerance"]
    for name in controller["controller_plugins"]:
        if controller[f"{name}.plugin"] == "dwb_core::DWBLocalPlanner":
            assert controller.get(f"{name}.xy_goal_tolerance", 0.25) <= checker, name
