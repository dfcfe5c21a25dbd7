"""spot_ros2's names for the interfaces that have a same-typed (or thin-adapter) equivalent
here (opt-in, ``spot_ros2_aliases:=true``): ``table.py`` says which, ``node.py`` relays the
topics, passes the services through and puts Triggers in front of the arm posture action.
doc/migration.md maps every other name."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "spot_ros2_aliases: spot_ros2's names (node spot_aliases; opt-in: spot_ros2_aliases:=true)",
    (
        Parameter("spot_ros2_alias_cameras",
                  ["frontleft", "frontright", "left", "right", "back", "hand"],
                  "also as camera/<c>/compressed"),
    ))

CAPABILITY = Capability(
    name="spot_ros2_aliases",
    summary="spot_ros2's names for same-typed interfaces (spot_aliases; opt-in)",
    nodes=("spot_driver.spot_ros2_aliases.node:AliasNode",),
    default_enabled=False,
    parameters=PARAMETERS,
    readme="spot_ros2 aliases (node `spot_aliases`; opt-in: `spot_ros2_aliases:=true`)",
    field_test="none: the aliases relay the driver's own topics and services inside its "
               "process; a robot's link never reaches them")
