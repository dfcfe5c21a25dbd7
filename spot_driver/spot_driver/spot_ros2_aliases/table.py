"""Which spot_ros2 names the aliases offer, and for what here (doc/migration.md, "alias")."""

from dataclasses import dataclass

from sensor_msgs.msg import CompressedImage, PointCloud2
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from spot_msgs.action import ArmPosture
from spot_msgs.msg import BatteryStateArray, PowerState
from spot_msgs.srv import ListWorldObjects, MutateWorldObject, SetStandHeight


@dataclass(frozen=True)
class TopicAlias:
    ours: str
    theirs: str
    msg_type: type
    latched: bool = False


@dataclass(frozen=True)
class ServiceAlias:
    theirs: str
    ours: str
    srv_type: type


TOPICS = (
    TopicAlias("status/battery", "status/battery_states", BatteryStateArray),
    TopicAlias("status/power", "status/power_states", PowerState),
    TopicAlias("has_arm", "status/has_arm", Bool, latched=True),
    TopicAlias("lidar/points", "velodyne/points", PointCloud2),
)

SERVICES = (
    ServiceAlias("set_stand_height", "stand_height", SetStandHeight),
    ServiceAlias("list_world_objects", "world_objects/list", ListWorldObjects),
    ServiceAlias("mutate_world_objects", "world_objects/mutate", MutateWorldObject),
    ServiceAlias("open_gripper", "gripper/open", Trigger),
    ServiceAlias("close_gripper", "gripper/close", Trigger),
    ServiceAlias("stop_dance", "choreography/stop", Trigger),
)

# std_srvs/Trigger in front of the arm/posture action
POSTURES = {"arm_stow": ArmPosture.Goal.STOW, "arm_unstow": ArmPosture.Goal.UNSTOW,
            "arm_carry": ArmPosture.Goal.CARRY}


def camera_aliases(cameras: list[str]) -> tuple[TopicAlias, ...]:
    """spot_ros2's ``camera/<c>/compressed`` for our ``camera/<c>/image/compressed``."""
    return tuple(TopicAlias(f"camera/{c}/image/compressed", f"camera/{c}/compressed",
                            CompressedImage) for c in cameras)
