"""Docking: the docks and fiducials in the world (``DockWorld``), the docking commands and
docked state (``Docking``, stepped by the physics loop's hook, moving the body through its
verbs), and the docking and world-object services."""
