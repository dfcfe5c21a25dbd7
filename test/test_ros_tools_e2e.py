"""The real robot_state_publisher and tf2 (built from upstream Jazzy source: `make ros-tools`)
beside the driver, as `ros2 launch spot_sim spot_sim.launch.py` starts them
(``launch_rsp:=auto``): with an arm and no robot name (tf_root odom); two robots with robot
names side by side, one with tf_root vision. Checked through tf2's own buffer (``tf2_ros`` in
Python, the kit's) and ``tf2_echo``: every link of the model resolves from odom, vision, body,
hand and every camera frame; one tree per robot, each frame with one parent; nothing that
moves on /tf_static; robot_state_publisher has the connected robot's model."""

import io
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import rclpy
import yourdfpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import DRIVER_PKG, REPO, LaunchProcess
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from conftest import require_layer, wait_for
from spot_driver.description import frame_names as naming

CAMERAS = ("frontleft_fisheye", "frontright_fisheye", "left_fisheye", "right_fisheye",
           "back_fisheye")
WITH_HAND = '["frontleft", "frontright", "left", "right", "back", "hand"]'  # cameras, with an arm


def require_kit():
    """The real robot_state_publisher and tf2_ros (an apt ROS 2 has them; here the tools
    layer)."""
    require_layer("tools", ("robot_state_publisher",), ("tf2_ros",))


def launch(tmp: Path, name: str, *args: str) -> LaunchProcess:
    return LaunchProcess(["spot_sim", "spot_sim.launch.py", f"certs_dir:={tmp / name}",
                          *args], tmp / f"{name}.log")


def config_with(tmp: Path, **values: str) -> Path:
    """config/spot_driver.yaml with ``values`` changed (e.g. tf_root: vision)."""
    text = (DRIVER_PKG / "config" / "spot_driver.yaml").read_text()
    for key, value in values.items():
        text, count = re.subn(rf"^(\s+{key}:) (\[[^\]]*\]|\S+)", rf"\1 {value}", text,
                              flags=re.M)
        assert count == 1, key
    path = tmp / "spot_driver.yaml"
    path.write_text(text)
    return path


class Tf2View:
    """tf2's own buffer (``tf2_ros.Buffer`` with a ``TransformListener``), /tf_static's
    children and the latched robot_description of each robot."""

    def __init__(self, descriptions: list[str]) -> None:
        import tf2_ros
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node("tf2_view")
        self.buffer = tf2_ros.Buffer(cache_time=rclpy.duration.Duration(seconds=10))
        self.listener = tf2_ros.TransformListener(self.buffer, self.node, spin_thread=False)
        latched = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.static: dict[str, list] = {}
        self.dynamic: set[str] = set()
        self.node.create_subscription(TFMessage, "/tf_static", self._static, latched)
        self.node.create_subscription(TFMessage, "/tf", self._dynamic, 10)
        self.descriptions: dict[str, str] = {}
        for topic in descriptions:
            self.node.create_subscription(
                String, topic, lambda msg, t=topic: self.descriptions.__setitem__(t, msg.data),
                QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)

    def _static(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            self.static.setdefault(t.child_frame_id, []).append(t.header.frame_id)

    def _dynamic(self, msg: TFMessage) -> None:
        self.dynamic.update(t.child_frame_id for t in msg.transforms)

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
            if predicate():
                return True
        return predicate()

    def parents(self) -> dict[str, str]:
        """child -> parent as tf2's buffer has them (its YAML dump of every frame)."""
        dump = self.buffer.all_frames_as_yaml()
        return dict(re.findall(r"^(\S+):\s*\n\s+parent: '([^']*)'", dump, flags=re.M))

    def resolves(self, target: str, source: str) -> bool:
        return self.buffer.can_transform(target, source, rclpy.time.Time())

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def model_joints(urdf: str) -> dict[str, tuple[str, str]]:
    """child link -> (parent link, joint type) of a URDF."""
    model = yourdfpy.URDF.load(io.BytesIO(urdf.encode()), load_meshes=False,
                               build_collision_scene_graph=False)
    return {j.child: (j.parent, j.type) for j in model.joint_map.values()}


def check_robot(view: Tf2View, prefix: str, root: str, has_arm: bool,
                wrist: str = "arm0.link_wr1") -> None:
    """Every link of the model resolves from the world frames, body, hand and the cameras;
    one tree rooted at ``root``; each frame one parent; /tf_static holds no moving joint.
    ``wrist``: the wrist's name in the driver's frame_names."""
    urdf = view.descriptions[f"/{prefix.rstrip('/')}/robot_description" if prefix
                             else "/robot_description"]
    joints = model_joints(urdf)
    links = set(joints) | {parent for parent, _ in joints.values()}
    assert (f"{prefix}{wrist}" in links) == has_arm, sorted(links)
    # every sensor mount the driver latched (each camera's, depth's and the lidar's frame)
    cameras = {f"{prefix}{c}" for c in CAMERAS}
    if has_arm:
        cameras.add(f"{prefix}hand_color_image_sensor")
    assert view.spin_until(lambda: cameras <= set(view.static), 30), sorted(view.static)
    mounts = sorted(c for c in view.static if c.startswith(prefix) and c not in joints)
    if has_arm:
        assert f"{prefix}hand_color_image_sensor" in mounts, mounts
    sources = [f"{prefix}{f}" for f in ("odom", "vision", "body")] + mounts
    if has_arm:
        sources.append(f"{prefix}hand")
    wanted = sorted(links | set(sources))
    assert view.spin_until(lambda: all(view.resolves(sources[0], f) for f in wanted), 30), \
        [f for f in wanted if not view.resolves(sources[0], f)]
    for source in sources:
        unresolved = [f for f in wanted if not view.resolves(source, f)]
        assert not unresolved, (source, unresolved)
    parents = {c: p for c, p in view.parents().items() if c.startswith(prefix)}
    roots = {p for p in parents.values() if p not in parents}
    assert roots == {f"{prefix}{root}"}, (roots, parents)
    for child, published in view.static.items():
        if child.startswith(prefix):
            assert len(set(published)) == 1, (child, published)  # one parent on /tf_static
            assert child not in view.dynamic, f"{child} is on both /tf and /tf_static"
            if child in joints:
                assert joints[child][1] == "fixed", f"{child} moves but is on /tf_static"
    for child, (parent, _) in joints.items():  # the driver and RSP agree on the parents
        assert parents.get(child) == parent, (child, parents.get(child), parent)


@pytest.fixture(scope="module")
def kit():
    require_kit()


def wait_streaming(*launches: LaunchProcess) -> None:
    deadline = time.monotonic() + 60
    while not all("streaming camera" in x.output() for x in launches):
        assert time.monotonic() < deadline, [x.output()[-3000:] for x in launches]
        time.sleep(0.2)


@pytest.mark.parametrize(("root", "names"), [("odom", "spot"), ("vision", "spot"),
                                             ("body", "spot_ros2")])
def test_one_robot_with_an_arm_the_real_rsp_and_tf2(kit, tmp_path, root, names):
    """No robot name, in each tf_root; the hand camera streams too. spot_ros2's way too: its
    frame names (``frame_names:=spot_ros2``: base_link, the rails, ``arm_link_*`` among the
    model's links) under its ``tf_root: body``."""
    config = config_with(tmp_path, tf_root=root, cameras=WITH_HAND)
    view = Tf2View(["/robot_description"])  # before the launch: a failure here leaves none
    robot = launch(tmp_path, "solo", "arm:=true", f"config_file:={config}",
                   f"frame_names:={names}")
    wrist = naming.published("arm0.link_wr1", names)
    try:
        wait_streaming(robot)
        assert "[robot_state_publisher-" in robot.output(), robot.output()[-3000:]
        assert view.spin_until(lambda: f'"{wrist}"' in view.descriptions.get(
            "/robot_description", ""), 30), "robot_state_publisher lacks the arm's model"
        check_robot(view, "", root, has_arm=True, wrist=wrist)
        if names == "spot_ros2":
            assert view.resolves("odom", "front_rail") and view.resolves("body", "base_link")
        echo = tf2_echo(root, "front_left_lower_leg")
        assert "Translation: [" in echo, echo
    finally:
        view.close()
        assert robot.stop() == 0, robot.output()[-3000:]
    assert "Traceback" not in robot.output(), robot.output()[-3000:]


def tf2_echo(target: str, source: str, seconds: float = 20.0) -> str:
    """What ``ros2 run tf2_ros tf2_echo TARGET SOURCE`` prints until its first transform (at
    most ``seconds``: it retries until both frames are in its buffer)."""
    process = subprocess.Popen(["ros2", "run", "tf2_ros", "tf2_echo", target, source],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=REPO, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    wait_for(lambda: "Translation: [" in "".join(lines) or process.poll() is not None,
             seconds, 0.1)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)  # ros2 run and tf2_echo under it
        process.wait(timeout=10)
    reader.join(5)
    return "".join(lines)


def test_two_named_robots_side_by_side_one_in_vision(kit, tmp_path):
    vision = config_with(tmp_path, tf_root="vision", cameras=WITH_HAND)
    view = Tf2View(["/spot1/robot_description", "/spot2/robot_description"])
    spot1 = launch(tmp_path, "spot1", "robot_name:=spot1")
    spot2 = launch(tmp_path, "spot2", "robot_name:=spot2", "arm:=true",
                   f"config_file:={vision}")
    try:
        wait_streaming(spot1, spot2)
        assert view.spin_until(lambda: len(view.descriptions) == 2, 30), view.descriptions
        check_robot(view, "spot1/", "odom", has_arm=False)
        check_robot(view, "spot2/", "vision", has_arm=True)
        assert "Translation: [" in tf2_echo("spot2/vision", "spot2/hand")
    finally:
        view.close()
        codes = [spot1.stop(), spot2.stop()]
        assert codes == [0, 0], [spot1.output()[-3000:], spot2.output()[-3000:]]
