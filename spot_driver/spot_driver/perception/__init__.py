"""Cameras and lidar: what to request (``streams.py``, ``cameras.py``), image conversions,
and the ``spot_perception`` node."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "cameras and lidar (node spot_perception)",
    (
        Parameter("cameras", ["frontleft", "frontright", "left", "right", "back"],
                  'also "hand" with an arm'),
        Parameter("camera_rate", 15.0, "Hz per camera (the robot serves up to 15 Hz)"),
        Parameter("rates", None, "per-camera override, Hz", example="{back: 5.0}"),
        Parameter("publish_raw_images", True,
                  "camera/<name>/image (decoded from the robot's JPEG if needed)"),
        Parameter("publish_compressed_images", True,
                  "camera/<name>/image/compressed: robot JPEG, not re-encoded"),
        Parameter("publish_depth", True, "depth/<name>/image (16UC1, mm) + camera_info"),
        Parameter("publish_depth_registered", False,
                  "depth_registered/<name>/image: depth in the visual frame"),
        Parameter("publish_depth_points", False,
                  "depth/<name>/points: PointCloud2 from depth + intrinsics"),
        Parameter("publish_stitched_front", False,
                  "camera/frontmiddle_virtual/image (+ camera_info): the front cameras "
                  "stitched into one virtual camera between them"),
        Parameter("stitched_front_rate", 10.0,
                  "Hz of the stitched image (each asks the robot for both front images)"),
        Parameter("publish_depth_registered_points", False,
                  "depth_registered/<name>/points: XYZRGB PointCloud2, the registered depth "
                  "coloured by the camera's image"),
        Parameter("jpeg_quality", 75, "1-100, asked of the robot"),
        Parameter("image_color", "native",
                  '"native", "mono" or "rgb": pixel format asked of the robot'),
        Parameter("lazy_publishing", True, "only request what someone subscribes to"),
        Parameter("pace_slow_readers", False,
                  "fetch no image while a reader has not acknowledged the previous one (one "
                  "fetched meanwhile is dropped and counted); the launch sets it in payload "
                  "network modes"),
        Parameter("sensor_qos", "reliable",
                  'REP-2003: "reliable" (default subscribers receive it) or "best_effort" '
                  "(sensor-data QoS) for images, points, lidar"),
        Parameter("lidar_source", "velodyne-point-cloud",
                  'point-cloud service/source of the lidar; "" = off'),
        Parameter("lidar_rate", 10.0, "Hz"),
    ))

CAPABILITY = Capability(
    name="perception",
    summary="start the cameras and lidar (node spot_perception)",
    nodes=("spot_driver.perception.node:PerceptionNode",),
    parameters=PARAMETERS,
    readme="Cameras and lidar (node `spot_perception`)",
    health=("stream camera", "stream point cloud"),
    field_test=("test/test_perception_e2e.py::"
                "test_every_camera_topic_has_the_right_encoding_size_frame_and_info"))
