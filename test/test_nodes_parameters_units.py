"""The driver's parameter declarations as rclpy gives them values from a parameters file."""

import rclpy
from rclpy.context import Context
from rclpy.node import Node

from spot_driver.nodes.parameters import declare


def test_an_empty_list_from_a_file_is_an_empty_list(tmp_path):
    """YAML's ``cameras: []`` reaches rclpy with no type (NOT_SET, value None): the driver
    crashed iterating it (found by test_moveit_e2e, which runs without cameras)."""
    params = tmp_path / "params.yaml"
    params.write_text("listed:\n  ros__parameters:\n    cameras: []\n    spare: [\"a\"]\n")
    context = Context()
    rclpy.init(args=["--ros-args", "--params-file", str(params)], context=context)
    try:
        node = Node("listed", context=context)
        assert declare(node, "cameras", ["frontleft", "back"]) == []
        assert declare(node, "spare", ["b"]) == ["a"]
        assert declare(node, "untouched", ["c"]) == ["c"]
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
