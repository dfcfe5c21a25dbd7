"""Docking: dock/undock commands with their checks (``commander.py``), docks and fiducials
as messages (``conversions.py``), and the ``spot_docking`` node."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "docking and world objects (node spot_docking)",
    (
        Parameter("docking_timeout", 60.0,
                  "s a dock/undock goal may take when it does not set one"),
        Parameter("docking_state_rate", 1.0,
                  "Hz polling of the docking state (status/docking, latched)"),
        Parameter("world_objects_rate", 1.0,
                  "Hz: world_objects topic and dock_<id>/fiducial_<id> on /tf"),
        Parameter("world_object_frames", "",
                  "comma-separated TF frames pushed to the robot as drawable world objects "
                  "each second (as spot_ros2's object sync; empty: none)"),
    ))

CAPABILITY = Capability(
    name="docking",
    summary="start docking and world objects (spot_docking)",
    nodes=("spot_driver.docking.node:DockingNode",),
    parameters=PARAMETERS,
    readme="Docking and world objects (node `spot_docking`)",
    field_test="test/test_docking_missions_e2e.py::test_undock_walk_away_and_dock_again")
