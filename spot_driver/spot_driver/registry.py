"""Every capability of the driver, in the order their nodes are created.

To add a capability, import its package here and add it to ``CAPABILITIES`` (see "Adding a
capability" in doc/layout.md). Reading the registry imports no ROS node: launch files use it
for their arguments.
"""

from spot_driver import (
    autonomy,
    body,
    choreography,
    data_acquisition,
    description,
    diagnostics,
    docking,
    low_level,
    manipulation,
    missions,
    motion,
    network,
    perception,
    spot_cam,
    spot_ros2_aliases,
    state,
)
from spot_driver.core.capability import Capability, Parameter, Section, load
from spot_driver.core.driver_parameters import CONNECTION

CAPABILITIES: tuple[Capability, ...] = tuple(package.CAPABILITY for package in (
    state, body, motion, perception, manipulation, docking, missions, autonomy, choreography,
    description, network, low_level, diagnostics, spot_cam, data_acquisition,
    spot_ros2_aliases))
OPTIONAL = tuple(c.name for c in CAPABILITIES if c.optional)
# Every parameter section, as config/spot_driver.yaml shows them: the connection's, then each
# capability's in registry order.
SECTIONS: tuple[Section, ...] = (CONNECTION, *(c.parameters for c in CAPABILITIES
                                               if c.parameters is not None))
PARAMETERS: dict[str, Parameter] = {p.name: p for s in SECTIONS for p in s.parameters}


def enabled(switches: dict[str, bool]) -> list[Capability]:
    """The capabilities to run: every core one, and each optional one whose switch is on."""
    return [c for c in CAPABILITIES
            if not c.optional or switches.get(c.name, c.default_enabled)]


def sdk_clients(capabilities: list[Capability]) -> list[type]:
    """The SDK client classes ``capabilities`` need registered beyond the standard ones."""
    return [load(path) for c in capabilities for path in c.sdk_clients]
