"""What the connected robot is made of, asked of the robot itself."""

from collections.abc import Callable

from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import describe


def robot_has_arm(connection: RobotConnection, warn: Callable[[str], None]) -> bool:
    """From the robot's hardware configuration (its skeleton lists the arm's links); from its
    state (a manipulator section) when the configuration is unavailable."""
    try:
        config = connection.state_client.get_robot_hardware_configuration(timeout=5.0)
        return any(link.name.startswith("arm0.") for link in config.skeleton.links)
    except Exception as exc:
        warn(f"hardware configuration unavailable ({describe(exc)}); using the robot state "
             "to detect an arm")
    try:
        return connection.state_client.get_robot_state(timeout=5.0).HasField("manipulator_state")
    except Exception:
        return False
