"""Data-acquisition protos as ROS messages: pure functions."""

from builtin_interfaces.msg import Time
from sensor_msgs.msg import CompressedImage
from std_msgs.msg import Header

from spot_msgs.msg import Capture


def capture_msg(data_id, kind: str, stamp: Time) -> Capture:
    """A ``DataIdentifier`` (and what it holds) as a Capture; ``stamp``: its local time."""
    action = data_id.action_id
    return Capture(id=data_id.id, group_name=action.group_name, action_name=action.action_name,
                   channel=data_id.channel, data_name=data_id.data_name, kind=kind, stamp=stamp)


def compressed_image(image_capture, stamp: Time, frame_prefix: str) -> CompressedImage | None:
    """A stored JPEG image capture as a CompressedImage (None for raw images)."""
    image = image_capture.image
    if image.format != image.FORMAT_JPEG:
        return None
    frame = image_capture.frame_name_image_sensor or "body"
    return CompressedImage(header=Header(stamp=stamp, frame_id=f"{frame_prefix}{frame}"),
                           format="jpeg", data=image.data)
