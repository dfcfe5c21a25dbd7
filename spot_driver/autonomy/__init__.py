"""Autonomy on the robot: GraphNav maps, localization and navigation, map recording, local
grids and Autowalk, each a plain class driving the robot's own services."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="autonomy", summary="start GraphNav and local grids (spot_graph_nav, spot_local_grids)",
    nodes=("spot_driver.autonomy.graph_nav_node:GraphNavNode",
           "spot_driver.autonomy.local_grid_node:LocalGridNode"),
    executor="autonomy", parameters="GraphNav and local grids")
