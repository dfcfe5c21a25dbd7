"""Every service module of the simulated robot, in the order their servicers are built.

A module declares its services in ``SERVICES`` (see ``spot_sim.core.served``); a servicer that
calls another comes after it here (robot-mission after robot-command, power, docking,
GraphNav and data acquisition; autowalk after mission; the Spot CAM's after its power; data
acquisition after the cameras and the Spot CAM). The directory lists the services in this
order.
"""

from spot_sim.autonomy import (
    auto_return_service,
    graph_nav_service,
    local_grid_service,
    map_processing_service,
    recording_service,
)
from spot_sim.body import (
    estop_service,
    keepalive_service,
    power_service,
    robot_command_service,
    spot_check_service,
)
from spot_sim.choreography import choreography_service
from spot_sim.core import (
    directory_registration_service,
    identity_service,
    lease_service,
    license_service,
    payload_service,
    time_sync_service,
)
from spot_sim.core.config import SimConfig
from spot_sim.core.hardware import fitted
from spot_sim.core.served import Served
from spot_sim.data_acquisition import data_acquisition_service, data_buffer_service
from spot_sim.diagnostics import audio_visual_service, fault_service, log_status_service
from spot_sim.docking import docking_service, world_object_service
from spot_sim.low_level import joint_streaming_service
from spot_sim.manipulation import (
    arm_surface_contact_service,
    inverse_kinematics_service,
    manipulation_service,
)
from spot_sim.missions import autowalk_service, mission_service
from spot_sim.perception import (
    camera_settings_service,
    image_service,
    point_cloud_service,
    ray_cast_service,
)
from spot_sim.spot_cam import (
    audio_service,
    compositor_service,
    health_service,
    lighting_service,
    media_log_service,
    ptz_service,
    stream_service,
)
from spot_sim.spot_cam import image_service as spot_cam_image_service
from spot_sim.spot_cam import power_service as spot_cam_power_service
from spot_sim.state import robot_state_service

MODULES = (identity_service, time_sync_service, lease_service, estop_service, power_service,
           robot_command_service, image_service, docking_service, world_object_service,
           graph_nav_service, spot_cam_power_service, ptz_service, compositor_service,
           audio_service, lighting_service, health_service, stream_service, media_log_service,
           spot_cam_image_service, point_cloud_service, data_acquisition_service,
           mission_service, recording_service, map_processing_service, local_grid_service,
           autowalk_service, choreography_service, license_service, fault_service,
           data_buffer_service, keepalive_service, payload_service, log_status_service,
           ray_cast_service, camera_settings_service, spot_check_service,
           joint_streaming_service, manipulation_service, arm_surface_contact_service,
           inverse_kinematics_service, directory_registration_service, auto_return_service,
           audio_visual_service, robot_state_service)
SERVICES: tuple[Served, ...] = tuple(served for module in MODULES for served in module.SERVICES)


def served(config: SimConfig) -> list[Served]:
    """The services a robot of ``config`` serves: every one whose hardware it has."""
    return [s for s in SERVICES if not s.hardware or fitted(config, s.hardware)]
