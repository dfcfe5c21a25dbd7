"""Every service module of the simulated robot, in the order their servicers are built.

A module declares its services in ``SERVICES`` (see ``spot_sim.services``); a servicer that
calls another comes after it here (robot-mission after robot-command, power, docking,
GraphNav and data acquisition; autowalk after mission; the Spot CAM's after its power; data
acquisition after the cameras and the Spot CAM). The directory lists the services in this
order.
"""

from spot_sim.config import SimConfig
from spot_sim.hardware import fitted
from spot_sim.services import (
    Served,
    arm_surface_contact,
    audio_visual,
    auto_return,
    autowalk,
    camera_settings,
    choreography,
    data_acquisition,
    data_buffer,
    directory_registration,
    docking,
    estop,
    fault,
    graph_nav,
    identity,
    image,
    inverse_kinematics,
    joint_streaming,
    keepalive,
    lease,
    license,
    local_grid,
    log_status,
    manipulation,
    map_processing,
    mission,
    payload,
    point_cloud,
    power,
    ray_cast,
    recording,
    robot_command,
    robot_state,
    spot_cam_audio,
    spot_cam_compositor,
    spot_cam_health,
    spot_cam_image,
    spot_cam_lighting,
    spot_cam_media_log,
    spot_cam_power,
    spot_cam_ptz,
    spot_cam_stream,
    spot_check,
    time_sync,
    world_object,
)

MODULES = (identity, time_sync, lease, estop, power, robot_command, image, docking, world_object,
           graph_nav, spot_cam_power, spot_cam_ptz, spot_cam_compositor, spot_cam_audio,
           spot_cam_lighting, spot_cam_health, spot_cam_stream, spot_cam_media_log,
           spot_cam_image, point_cloud, data_acquisition, mission, recording, map_processing,
           local_grid, autowalk, choreography, license, fault, data_buffer, keepalive, payload,
           log_status, ray_cast, camera_settings, spot_check, joint_streaming, manipulation,
           arm_surface_contact, inverse_kinematics, directory_registration, auto_return,
           audio_visual, robot_state)
SERVICES: tuple[Served, ...] = tuple(served for module in MODULES for served in module.SERVICES)


def served(config: SimConfig) -> list[Served]:
    """The services a robot of ``config`` serves: every one whose hardware it has."""
    return [s for s in SERVICES if not s.hardware or fitted(config, s.hardware)]
