"""Boston Dynamics' hello_spot through ROS: stand, turn the body 0.4 rad left over its feet,
save one image of the front-left camera, stand straight and sit. The twisted stand is any
``RobotCommand`` built with the SDK's RobotCommandBuilder, sent by the ``robot_command``
action."""

from pathlib import Path

from bosdyn.client.robot_command import RobotCommandBuilder
from bosdyn.geometry import EulerZXY
from sensor_msgs.msg import Image

from spot_driver_examples.spot import Spot, arguments
from spot_msgs.action import RobotCommand

CHANNELS = {"mono8": ("P5", 1), "rgb8": ("P6", 3)}


def save_image(image: Image, path: Path) -> None:
    """Write a mono8 or rgb8 image as PGM/PPM (any image viewer opens them)."""
    if image.encoding not in CHANNELS:
        raise ValueError(f"cannot save {image.encoding} as PGM/PPM (mono8 or rgb8)")
    magic, channels = CHANNELS[image.encoding]
    row = image.width * channels
    pixels = b"".join(bytes(image.data[r * image.step:r * image.step + row])
                      for r in range(image.height))
    path.write_bytes(f"{magic}\n{image.width} {image.height}\n255\n".encode() + pixels)


def stand(spot: Spot, yaw: float) -> None:
    command = RobotCommandBuilder.synchro_stand_command(footprint_R_body=EulerZXY(yaw=yaw))
    spot.act(RobotCommand, "robot_command",
             RobotCommand.Goal(command=command.SerializeToString()))


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--image", type=Path, default=Path("hello_spot.pgm"),
                        help="where to save the camera image")
    args = parser.parse_args()
    spot = Spot("hello_spot", args.robot)
    try:
        spot.action_client(RobotCommand, "robot_command")
        spot.connect()
        spot.ready()
        print("twisting the body 0.4 rad left")
        stand(spot, 0.4)
        image = spot.next_message(Image, "camera/frontleft/image")
        save_image(image, args.image)
        print(f"saved a {image.width}x{image.height} {image.encoding} image to {args.image}")
        print("standing straight")
        stand(spot, 0.0)
        print(f"sit: {spot.trigger('sit')}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
