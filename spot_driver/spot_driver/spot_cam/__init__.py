"""Spot CAM: the payload's pan-tilt-zoom heads (``ptz.py``, node ``spot_cam``); its speaker,
LEDs, compositor and media log (``audio.py``, ``lights.py``, ``compositor.py``,
``media_log.py``, node ``spot_cam_payload``); stills and health as messages (``stills.py``,
``health.py``); its cameras on topics (``images.py``, node ``spot_cam_images``). Found in
the robot's directory: on a robot without a Spot CAM every call answers so."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "Spot CAM (node spot_cam; calls fail with \"this robot has no Spot CAM\" without one)",
    (
        Parameter("spot_cam_ptz_rate", 5.0,
                  "Hz polling of the PTZ head's position (spot_cam/ptz/state and its frame on "
                  "/tf); 0 turns it off"),
        Parameter("spot_cam_ptz_name", "mech",
                  "the PTZ head the state topic and the frame follow (mech: the mechanical "
                  "head; digi: the panorama's digital view)"),
        Parameter("spot_cam_mount", [0.0, 0.0, 0.2],
                  "m: x, y, z of the PTZ head's pan/tilt centre in the body frame (measure "
                  "yours: it depends on where the Spot CAM sits on the rail)"),
        Parameter("spot_cam_image_rate", 1.0,
                  "Hz polling of the Spot CAM's image service for spot_cam_image_sources; 0 "
                  "turns the image topics off"),
        Parameter("spot_cam_image_sources", ["ptz", "ir"],
                  "Spot CAM cameras published as spot_cam/<camera>/image/compressed (pano, "
                  "c0-c4, ptz, ir); ptz and ir also get camera_info, ir also "
                  "spot_cam/ir/temperature"),
        Parameter("spot_cam_health_rate", 0.5,
                  "Hz polling of the Spot CAM's temperatures and built-in test (the spot_cam "
                  "status on /diagnostics); 0 turns it off"),
    ))

CAPABILITY = Capability(
    name="spot_cam",
    summary="start the Spot CAM services (spot_cam)",
    nodes=("spot_driver.spot_cam.node:SpotCamNode",
           "spot_driver.spot_cam.payload_node:SpotCamPayloadNode",
           "spot_driver.spot_cam.images_node:SpotCamImagesNode"),
    uses=("perception",),
    sdk_clients=("bosdyn.client.spot_cam.ptz:PtzClient",
                 "bosdyn.client.spot_cam.audio:AudioClient",
                 "bosdyn.client.spot_cam.lighting:LightingClient",
                 "bosdyn.client.spot_cam.media_log:MediaLogClient",
                 "bosdyn.client.spot_cam.health:HealthClient",
                 "bosdyn.client.spot_cam.compositor:CompositorClient"),
    health=("spot_cam",),
    parameters=PARAMETERS,
    readme="Spot CAM (node `spot_cam`)",
    field_test="test/test_spot_cam_e2e.py::test_ptz_moves_and_its_state_and_frame_follow")
