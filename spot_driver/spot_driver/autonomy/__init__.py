"""Autonomy on the robot: GraphNav maps, localization and navigation, map recording, local
grids and Autowalk, each a plain class driving the robot's own services."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "GraphNav and local grids (nodes spot_graph_nav, spot_local_grids)",
    (
        Parameter("map_frame", "",
                  "GraphNav's seed frame as a ROS frame (map -> odom on /tf); empty: map, or "
                  "graph_nav_map with frame_names spot_ros2"),
        Parameter("localization_rate", 5.0, "Hz of map -> odom and graph_nav/localization"),
        Parameter("navigation_timeout", 300.0,
                  "s a navigation goal may take when it does not set one"),
        Parameter("navigation_command_window", 3.0,
                  "s: the robot stops this long after the driver stops renewing a navigation "
                  "command (driver crash, lost link)"),
        Parameter("publish_map_cloud", True,
                  "graph_nav/cloud: the map's snapshot points (latched)"),
        Parameter("local_grid_rate", 2.0, "Hz of local_grids/<type>"),
        Parameter("local_grid_types",
                  ["terrain", "terrain_valid", "intensity", "no_step", "obstacle_distance"],
                  "local grids to publish, by the robot's names"),
        Parameter("no_step_threshold", 0.0, "m: no_step cells at or below this are occupied"),
        Parameter("obstacle_distance_threshold", 0.3,
                  "m: cells this close to an obstacle are occupied"),
    ))

CAPABILITY = Capability(
    name="autonomy", summary="start GraphNav and local grids (spot_graph_nav, spot_local_grids)",
    nodes=("spot_driver.autonomy.graph_nav_node:GraphNavNode",
           "spot_driver.autonomy.local_grid_node:LocalGridNode"),
    executor="autonomy",
    parameters=PARAMETERS,
    readme="GraphNav, recording and local grids (nodes `spot_graph_nav`, `spot_local_grids`)",
    health=("graph_nav localization",),
    field_test="test/test_autonomy_e2e.py::test_localize_to_fiducial_then_navigate")
