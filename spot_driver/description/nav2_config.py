"""Nav2's parameters for one robot: ``config/nav2_params.yaml`` with every frame it names
prefixed with the robot's frame prefix (Nav2 runs in the robot's namespace, so its relative
topics resolve to that robot's)."""

import yaml

# parameter names whose values are frames
FRAME_KEYS = ("global_frame", "robot_base_frame", "sensor_frame", "base_frame_id",
              "odom_frame_id")


def render(text: str, prefix: str = "") -> str:
    """The parameters with ``prefix`` before every frame."""
    params = yaml.safe_load(text)

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in FRAME_KEYS and isinstance(value, str):
                    node[key] = prefix + value
                else:
                    walk(value)

    walk(params)
    return yaml.safe_dump(params, sort_keys=False)
