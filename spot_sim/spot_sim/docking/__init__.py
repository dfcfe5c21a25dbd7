"""Docking: the docks and fiducials in the world, docking and undocking, and the docking
and world-object services."""
