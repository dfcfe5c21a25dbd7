"""Autonomy on the robot: GraphNav maps, localization and navigation, map recording, local
grids and Autowalk, each a plain class driving the robot's own services."""
