"""Our Nav2 launch and parameters against Nav2 Jazzy's own requirements, encoded below from
its source (ros-navigation/navigation2, tag 1.3.13): Nav2 cannot run on this machine, so this
is what stops a file of ours that Nav2 would refuse at bring-up."""

import importlib.util

import yaml
from ros_harness import REPO

from spot_driver.description import nav2_config

# nav2_bringup/launch/navigation_launch.py (1.3.13): its lifecycle nodes, the package and
# executable of each, and its remappings.
UPSTREAM = {
    "controller_server": ("nav2_controller", "controller_server", {"cmd_vel": "cmd_vel_nav"}),
    "smoother_server": ("nav2_smoother", "smoother_server", {}),
    "planner_server": ("nav2_planner", "planner_server", {}),
    "route_server": ("nav2_route", "route_server", {}),
    "behavior_server": ("nav2_behaviors", "behavior_server", {"cmd_vel": "cmd_vel_nav"}),
    "velocity_smoother": ("nav2_velocity_smoother", "velocity_smoother",
                          {"cmd_vel": "cmd_vel_nav"}),
    "collision_monitor": ("nav2_collision_monitor", "collision_monitor", {}),
    "bt_navigator": ("nav2_bt_navigator", "bt_navigator", {}),
    "waypoint_follower": ("nav2_waypoint_follower", "waypoint_follower", {}),
    "docking_server": ("opennav_docking", "opennav_docking", {}),
}
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


def launch_module():
    spec = importlib.util.spec_from_file_location("nav2_launch", REPO / "launch/nav2.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def params() -> dict:
    return yaml.safe_load((REPO / "config" / "nav2_params.yaml").read_text())


def node_params(name: str) -> dict:
    p = params()
    if name in ("local_costmap", "global_costmap"):
        return p[name][name]["ros__parameters"]
    return p[name]["ros__parameters"]


def test_every_upstream_node_is_started_as_upstream_starts_it_or_left_out_with_a_reason():
    launch = launch_module()
    started = {name: (package, executable, remaps)
               for package, executable, name, remaps in launch.NODES}
    assert set(started) | set(launch.NOT_STARTED) == set(UPSTREAM)
    assert not set(started) & set(launch.NOT_STARTED)
    for name, spec in started.items():
        assert spec == UPSTREAM[name], name
    assert all(reason for reason in launch.NOT_STARTED.values())


def test_every_started_node_is_configured_with_what_nav2_requires():
    launch = launch_module()
    p = params()
    for _, _, name, _ in launch.NODES:
        assert name in p, f"no parameters for {name}"
    monitor = node_params("collision_monitor")
    assert monitor["cmd_vel_in_topic"] == SMOOTHER_OUTPUT and monitor["cmd_vel_out_topic"] == \
        "cmd_vel"  # the driver's cmd_vel comes out of the collision monitor
    assert monitor["polygons"] and monitor["observation_sources"]
    for polygon in monitor["polygons"]:
        entry = monitor[polygon]
        assert entry["type"] in ("polygon", "circle", "velocity_polygon")
        assert entry["action_type"] in ("stop", "slowdown", "limit", "approach")
        assert "points" in entry or "polygon_sub_topic" in entry or (
            entry["action_type"] == "approach" and "footprint_topic" in entry)
    for source in monitor["observation_sources"]:
        assert monitor[source]["type"] in ("scan", "pointcloud", "range", "polygon")
        assert monitor[source]["topic"]
    for node, lists in PLUGIN_LISTS.items():
        for key in lists:
            for plugin_id in node_params(node).get(key, []):
                assert node_params(node)[plugin_id]["plugin"], (node, plugin_id)
    for costmap in ("local_costmap", "global_costmap"):
        costmap_params = node_params(costmap)
        if costmap_params.get("plugins", COSTMAP_DEFAULT_PLUGINS) != COSTMAP_DEFAULT_PLUGINS:
            for layer in costmap_params["plugins"]:
                assert costmap_params[layer]["plugin"], (costmap, layer)


def test_spots_frames_and_the_local_grids_with_matching_qos():
    for node in ("bt_navigator", "behavior_server", "local_costmap", "global_costmap"):
        assert node_params(node)["robot_base_frame"] == "flat_body"  # gravity-aligned
    assert node_params("collision_monitor")["base_frame_id"] == "flat_body"
    local = node_params("local_costmap")
    grid_layers = [layer for layer in local["plugins"]
                   if local[layer]["plugin"] == "nav2_costmap_2d::StaticLayer"]
    assert grid_layers, "the local costmap does not use the robot's local grids"
    for layer in grid_layers:
        assert local[layer]["map_topic"].startswith("local_grids/")
        # the driver publishes local grids volatile (qos.STATE): a transient-local
        # subscriber would never match
        assert local[layer]["map_subscribe_transient_local"] is False


def test_the_launch_prefixes_every_frame_for_a_named_robot():
    text = (REPO / "config" / "nav2_params.yaml").read_text()
    rendered = yaml.safe_load(nav2_config.render(text, "spot1/"))
    frames = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in nav2_config.FRAME_KEYS:
                    frames.append(value)
                walk(value)

    walk(rendered)
    assert frames and all(frame.startswith("spot1/") for frame in frames)
