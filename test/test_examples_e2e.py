"""The examples package end to end: each program of ``examples/`` (a ROS client in its own
process) -> driver -> gRPC -> simulated robot. What it did is checked on the simulated robot
itself, sampled while the program runs, not taken from the program's own output."""

import ast
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import Pose, PoseStamped
from ros_harness import DEFAULT_SIGINT, DriverProcess, RosClient
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from conftest import MISSING, PASSWORD, USERNAME, part, running_sim, wait_for
from spot_msgs.srv import GetInverseKinematics
from spot_sim.body.arm.model import Arm
from spot_sim.body.base import Base
from spot_sim.body.legs import Legs
from spot_sim.body.mobility import Se2

EXAMPLES = Path(__file__).resolve().parent.parent / "spot_driver_examples"
HELPERS = {"__init__", "spot", "joint_stream"}
RUN_TIMEOUT_S = 120.0
SAMPLE_S = 0.05


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True) as sim:
        ros = RosClient("examples_test_client")
        ros.subscribe("/joint_states", JointState)
        # spot_ros2's examples against a driver with spot_ros2's frame names, as a switching
        # user would start it (every other module runs the default names)
        driver = DriverProcess(sim, logs / "driver.log", USERNAME, PASSWORD,
                               params={"enable_low_level": "true", "enable_perception": "true",
                                       "cameras": "[frontleft]", "frame_names": "spot_ros2"})
        try:
            assert ros.wait_for(lambda: ros.latest("/joint_states") is not None, 30), \
                driver.output()
            yield sim, driver, ros, logs
        finally:
            ros.close()
            driver.stop()


class Run:
    """One example program running, the simulated robot sampled meanwhile."""

    def __init__(self, sim, name: str, *args: str, sample=None, env: dict | None = None):
        self.process = subprocess.Popen(  # Ctrl-C reaches it even from a background pytest
            [*DEFAULT_SIGINT, sys.executable, "-m", f"spot_driver_examples.{name}", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=dict(os.environ, **(env or {})))
        self.samples: list = []
        self._sample, self._sim = sample, sim
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while self.process.poll() is None:
            if self._sample is not None:
                self.samples.append(self._sample(self._sim.robot))
            time.sleep(SAMPLE_S)

    def stop(self) -> str:
        """Ctrl-C, then the program's output however it exited."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.communicate(timeout=30.0)[0]
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.communicate()[0]

    def finish(self, timeout: float = RUN_TIMEOUT_S) -> str:
        """The program's output, once it exited 0 (the test fails otherwise)."""
        try:
            output, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
            raise AssertionError(f"still running after {timeout} s:\n{output}") from None
        self._thread.join(1.0)
        assert self.process.returncode == 0, output
        return output


def run(sim, name: str, *args: str, sample=None) -> tuple[str, list]:
    example = Run(sim, name, *args, sample=sample)
    return example.finish(), example.samples


def ahead_of(start: Se2, here: Se2) -> float:
    return (here.x - start.x) * math.cos(start.yaw) + (here.y - start.y) * math.sin(start.yaw)


def body(robot) -> Se2:
    return robot.odom_body()


def hand(robot) -> np.ndarray:
    return part(robot, Arm).hand()[:3, 3].copy()


def near(points: list, target, tolerance: float) -> bool:
    return bool(np.min(np.linalg.norm(np.array(points) - np.array(target), axis=1))
                < tolerance)


def test_every_program_is_installed_documented_and_run_here():
    """Each module of the package is a program of examples/setup.py (but its two helpers),
    installed by the setup as ``ros2 run spot_driver_examples <name>``, has a row in the
    package's README and a test in this file that runs it."""
    tree = ast.parse((EXAMPLES / "setup.py").read_text())
    programs = next(ast.literal_eval(node.value) for node in ast.walk(tree)
                    if isinstance(node, ast.Assign) and node.targets[0].id == "PROGRAMS")
    modules = {p.stem for p in (EXAMPLES / "spot_driver_examples").glob("*.py")}
    assert modules - HELPERS == set(programs)
    readme, tests = (EXAMPLES / "README.md").read_text(), Path(__file__).read_text()
    installed = EXAMPLES.parent / "install" / "spot_driver_examples" / "lib" / \
        "spot_driver_examples"
    for name in programs:
        assert f"| `{name}` |" in readme, name
        assert f'"{name}"' in tests or f"examples.{name}" in tests, name
        assert (installed / name).exists(), f"{name} is not installed in {installed}"


def test_the_driver_here_publishes_spot_ros2s_frame_names(world):
    _sim, _driver, ros, _logs = world
    ros.subscribe("/tf", TFMessage)
    assert ros.wait_for(lambda: any(t.child_frame_id == "arm_link_wr1"
                                    for m in ros.received("/tf") for t in m.transforms), 10)
    published = {name for m in ros.received("/tf") for t in m.transforms
                 for name in (t.child_frame_id, t.header.frame_id)}
    assert not [name for name in published if name.startswith("arm0.")], published
    # and a goal in spot_ros2's names: base_link is the body, arm_link_wr1 the wrist
    for frame in ("base_link", "arm_link_wr1"):
        target = PoseStamped()
        target.header.frame_id = frame
        target.pose.position.x, target.pose.orientation.w = 0.7, 1.0
        answer = ros.call(GetInverseKinematics, "/arm/inverse_kinematics",
                          GetInverseKinematics.Request(target_pose=target))
        assert answer.success, (frame, answer.message)


def test_walk_forward_walks_one_metre_and_sits(world):
    sim = world[0]
    start = sim.robot.odom_body()
    output, _ = run(sim, "walk_forward")
    assert "walking 1.0 m forward" in output
    assert ahead_of(start, sim.robot.odom_body()) == pytest.approx(1.0, abs=0.1)
    assert not part(sim.robot, Legs).posture.standing


def test_spot_in_circle_goes_around_and_ends_where_it_started(world):
    sim = world[0]
    start, radius = sim.robot.odom_body(), 0.6
    centre = (start.x - radius * math.sin(start.yaw), start.y + radius * math.cos(start.yaw))
    _, samples = run(sim, "spot_in_circle", "--radius", str(radius), "--steps", "6",
                     sample=body)
    end = sim.robot.odom_body()
    assert math.hypot(end.x - start.x, end.y - start.y) < 0.15
    distances = [math.hypot(s.x - centre[0], s.y - centre[1]) for s in samples]
    # chords between six points on the circle (r cos(30 deg) to r), corners cut where a goal
    # counts once the robot is near it (precise_positioning off, as spot_ros2's default)
    assert min(distances) > radius * 0.5
    assert max(distances) < radius + 0.1
    farthest = max(math.hypot(s.x - start.x, s.y - start.y) for s in samples)
    assert 1.5 * radius < farthest < 2 * radius + 0.1  # it went round, not back and forth


def test_hello_spot_twists_the_body_saves_an_image_and_sits(world, tmp_path):
    sim = world[0]
    image = tmp_path / "hello.pgm"

    def yaw(robot) -> float:
        q = part(robot, Base).rotation
        return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y ** 2 + q.z ** 2))

    output, yaws = run(sim, "hello_spot", "--image", str(image), sample=yaw)
    assert max(yaws) == pytest.approx(0.4, abs=0.05), output
    assert abs(yaws[-1]) < 0.05
    data = image.read_bytes()
    magic, size, depth, pixels = data.split(b"\n", 3)
    width, height = (int(v) for v in size.split())
    assert magic in (b"P5", b"P6") and depth == b"255" and width > 100 and height > 100
    assert len(pixels) == width * height * (1 if magic == b"P5" else 3)
    assert not part(sim.robot, Legs).posture.standing


def test_arm_simple_reaches_both_poses_and_stows(world):
    sim = world[0]
    gripper = []

    def sample(robot):
        gripper.append(part(robot, Arm).gripper)
        return hand(robot)

    output, hands = run(sim, "arm_simple", sample=sample)
    assert near(hands, (0.75, 0.0, 0.25), 0.03), output
    assert near(hands, (0.75, 0.0, 0.0), 0.03), output
    assert min(gripper) < -1.4  # opened
    assert part(sim.robot, Arm).stowed


def test_batch_trajectory_traces_the_rose_in_batches(world):
    sim = world[0]
    output, hands = run(sim, "batch_trajectory", "--seconds", "5", "--batch", "40",
                        sample=hand)
    assert output.count("batch of") == 3, output
    points = np.array(hands)
    drawn = points[np.abs(points[:, 0] - 0.75) < 0.02]  # on the rose's plane
    assert np.ptp(drawn[:, 1]) > 0.2 and np.ptp(drawn[:, 2]) > 0.2, (np.ptp(drawn, axis=0))
    assert part(sim.robot, Arm).stowed


def test_inverse_kinematics_requests_move_the_arm_to_the_reachable_solutions(world):
    sim = world[0]
    output, hands = run(sim, "send_inverse_kinematics_requests", sample=hand)
    assert output.count("reachable; joints") == 2 and output.count("not reachable") == 1, output
    assert near(hands, (0.7, 0.2, 0.3), 0.03) and near(hands, (0.7, -0.2, 0.1), 0.03)
    assert part(sim.robot, Arm).stowed


def test_arm_with_body_follow_walks_the_body_behind_the_hand(world):
    sim = world[0]
    start = sim.robot.odom_body()
    output, _ = run(sim, "arm_with_body_follow")
    assert "STATUS_TRAJECTORY_COMPLETE" in output, output
    assert ahead_of(start, sim.robot.odom_body()) > 0.15


def test_nogo_example_stops_at_the_wall_then_walks_on_once_it_is_deleted(world):
    sim = world[0]
    start = sim.robot.odom_body()
    output, bodies = run(sim, "nogo_example", sample=body)
    assert "walking through it: trajectory: blocked:" in output, output
    assert "walking on: reached the goal" in output, output
    # the body's front (0.55 m ahead of its centre) stopped at the wall's near face
    stops = [ahead_of(start, b) for b in bodies]
    assert any(abs(s - (1.5 - 0.1 - 0.55)) < 0.08 for s in stops)
    assert ahead_of(start, sim.robot.odom_body()) == pytest.approx(0.85 + 1.0, abs=0.1)
    assert not part(sim.robot, Base).user_objects.objects


def test_simple_sub_walks_to_each_published_pose(world):
    sim, _, ros, _ = world
    example = Run(sim, "simple_sub", "--count", "2")
    publisher = ros.publisher(Pose, "/pose_commands", 10, timeout=30)  # the example's reader
    start = sim.robot.odom_body()  # a pose sent while it still stands up waits its turn
    for x, y in ((0.5, 0.0), (0.0, 0.5)):
        pose = Pose()
        pose.position.x, pose.position.y, pose.orientation.w = x, y, 1.0
        before = sim.robot.odom_body()
        publisher.publish(pose)
        assert ros.wait_for(lambda b=before: math.hypot(
            sim.robot.odom_body().x - b.x, sim.robot.odom_body().y - b.y) > 0.45, 30)
        assert ros.wait_for(lambda: part(sim.robot, Base).still, 10)
    example.finish()
    end = sim.robot.odom_body()
    left = (-(end.x - start.x) * math.sin(start.yaw) + (end.y - start.y) * math.cos(start.yaw))
    assert ahead_of(start, end) == pytest.approx(0.5, abs=0.1)
    assert left == pytest.approx(0.5, abs=0.1)


@pytest.mark.skipif(shutil.which("tmux") is None,
                    reason=MISSING + "tmux (wasd's curses screen is driven in a tmux pane; "
                    "scripts/setup.sh installs it)")
def test_wasd_drives_with_keys_typed_into_its_terminal(world, tmp_path):
    sim = world[0]
    socket, rc = str(tmp_path / "tmux"), tmp_path / "rc"
    tmux = ["tmux", "-S", socket]
    command = f"{sys.executable} -m spot_driver_examples.wasd; echo $? > {rc}"
    subprocess.run([*tmux, "new-session", "-d", "-x", "100", "-y", "20", command],
                   check=True, env=dict(os.environ, TERM="xterm"))
    try:
        def screen() -> str:
            return subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True,
                                  text=True).stdout

        deadline = time.monotonic() + 30
        while "status: ready" not in screen():
            assert time.monotonic() < deadline, screen()
            time.sleep(0.2)
        start = sim.robot.odom_body()
        for _ in range(15):  # w held for 1.5 s (a terminal's key repeat)
            subprocess.run([*tmux, "send-keys", "w"], check=True)
            time.sleep(0.1)  # sleep: a terminal's key repeat, 10 Hz
        deadline = time.monotonic() + 5
        while not part(sim.robot, Base).still:  # stops by itself once the key is released
            assert time.monotonic() < deadline, "still moving after the key was released"
            time.sleep(0.1)
        assert ahead_of(start, sim.robot.odom_body()) > 0.4
        subprocess.run([*tmux, "send-keys", "v"], check=True)
        deadline = time.monotonic() + 10
        while "sit:" not in screen():
            assert time.monotonic() < deadline, screen()
            time.sleep(0.2)
        subprocess.run([*tmux, "send-keys", "x"], check=True)
        deadline = time.monotonic() + 10
        while not rc.exists():
            assert time.monotonic() < deadline, screen()
            time.sleep(0.2)
        assert rc.read_text().strip() == "0"
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


@pytest.fixture
def streams(world, request):
    sim, _, _, logs = world
    # The simulated robot shares this process's interpreter with the sampling thread (not
    # so in test_low_level_e2e, which checks the defaults): a command then reached a stalled
    # robot past its 50 ms horizon and joint mode rightly ended. These tests are about the
    # examples, so their commands hold 0.5 s, and the watchdog waits 1 s (its upper bound):
    # at 0.25 s a stall in the side group once ended joint mode between two of
    # set_gripper_gains' open-closes, and its last one never opened.
    process = DriverProcess(sim, logs / f"{request.node.name}.log", USERNAME, PASSWORD,
                            module="spot_driver.low_level",
                            params={"low_level_watchdog": 1.0,
                                    "low_level_command_horizon": 0.5})
    yield process
    assert process.stop() == 0, process.output()


def test_noarm_squat_crouches_and_stands_again(world, streams):
    sim = world[0]

    def knees(robot) -> list | None:  # while joint mode drives the legs
        if not part(robot, Legs).joint_mode.engaged:
            return None
        return [part(robot, Legs).posture.joints[i] for i in (2, 5, 8, 11)]

    output, samples = run(sim, "noarm_squat", sample=knees)
    assert "down" in output and "up" in output, output
    driven = np.array([s for s in samples if s is not None])
    assert len(driven) > 40  # 2 s at 20 Hz at least
    assert np.min(driven) == pytest.approx(-2.25, abs=0.15)
    assert wait_for(lambda: part(sim.robot, Legs).posture.standing, 5.0)  # back to standing


def test_wiggle_arm_turns_the_wrist_both_ways(world, streams):
    sim = world[0]
    start = part(sim.robot, Arm).q.copy()
    def sample(robot):  # while joint mode drives the joints
        if not part(robot, Legs).joint_mode.engaged:
            return None
        arm = part(robot, Arm)
        return arm.q.copy(), arm.gripper, part(robot, Legs).posture.joints.copy()

    output, samples = run(sim, "wiggle_arm", sample=sample)
    driven = [s for s in samples if s is not None]
    wr0 = np.array([q[4] for q, _, _ in driven])
    assert wr0.max() > start[4] + 0.8 and wr0.min() < start[4] - 0.8, output
    assert min(g for _, g, _ in driven) < -0.4  # the gripper opened
    legs = np.array([j for _, _, j in driven])
    assert np.ptp(legs, axis=0).max() < 0.1  # the legs held where they stood


def engaged_samples(samples: list) -> list:
    return [s[1:] for s in samples if s[0]]


def test_set_gripper_gains_opens_at_the_nominal_gains_and_not_without_stiffness(world,
                                                                                streams):
    """At the nominal gains the gripper opens to about -1.57 rad and closes; at k_q_p = 0
    nothing pulls it to its targets and it stays closed (checked on the simulated gripper)."""
    sim = world[0]

    def gripper(robot):
        return part(robot, Legs).joint_mode.engaged, part(robot, Arm).gripper

    output, samples = run(sim, "set_gripper_gains", "--gains", "0,0", "--gains", "99,-1",
                          sample=gripper)
    assert "k_q_p=16.0 k_qd_p=0.32" in output and "k_q_p=50.0 k_qd_p=0.0" in output, output
    angles = np.array(engaged_samples(samples))[:, 0]
    opened = int(np.argmax(angles < -1.3))  # at the nominal gains, first
    assert angles[opened] < -1.3 and angles[:opened + 20].min() == pytest.approx(-1.57,
                                                                                abs=0.15)
    closed = opened + int(np.argmax(angles[opened:] > -0.1))  # closed again after it
    again = closed + int(np.argmax(angles[closed:] < -1.3))  # the clamped 50 opened it again
    assert again > closed, output
    # between: the k_q_p = 0 open-close (2.2 s), then the clamped 50's opening: the gripper
    # stayed closed through the first
    still = closed + int(np.nonzero(angles[closed:again] > -0.1)[0][-1])
    assert (still - closed) * SAMPLE_S > 1.5, (angles[closed:again], output)
    assert wait_for(lambda: not part(sim.robot, Legs).joint_mode.engaged, 5.0)


def test_mixed_level_example_stands_drives_the_gripper_joint_level_then_sits(world, streams):
    sim = world[0]

    def state(robot):
        return (part(robot, Legs).joint_mode.engaged, part(robot, Arm).gripper,
                part(robot, Legs).posture.standing)

    output, samples = run(sim, "mixed_level_example", "--no-pause", sample=state)
    driven = engaged_samples(samples)
    assert len(driven) > 20, output
    assert min(g for g, _ in driven) < -1.3  # the gripper opened under joint-level control
    first = next(i for i, s in enumerate(samples) if s[0])
    assert samples[first - 1][2], "it stood (high level) before joint mode"
    assert not samples[-1][0] and not part(sim.robot, Legs).posture.standing  # then high level: sat


def test_joint_command_passthrough_forwards_another_nodes_targets(world, streams):
    """Another node's JointState targets for one joint move that joint on the simulated robot
    (joint mode switched on by the first of them), the others hold; malformed ones are refused
    whole; when the targets stop the robot stands again, and Ctrl-C ends the program."""
    sim, _, ros, _ = world
    example = Run(sim, "joint_command_passthrough", "--idle", "0.9")  # streams' watchdog: 1.0
    engaged = []
    try:
        targets = ros.publisher(JointState, "/joint_commands", timeout=60.0)
        start = part(sim.robot, Arm).q.copy()
        bad = JointState(name=["arm_wr1", "nosuch"], position=[0.0, 0.0])
        nan = JointState(name=["arm_wr1"], position=[float("nan")])
        goal = start[5] + 0.6
        began = time.monotonic()
        while (t := time.monotonic() - began) < 2.5:  # a planner's stream at 50 Hz
            targets.publish(bad)
            targets.publish(nan)
            wr1 = start[5] + (goal - start[5]) * min(1.0, t / 1.0)
            targets.publish(JointState(name=["arm_wr1"], position=[wr1]))
            engaged.append(part(sim.robot, Legs).joint_mode.engaged)
            time.sleep(0.02)
        arm = part(sim.robot, Arm).q.copy()
        assert sum(engaged) > len(engaged) / 2, example.stop()
        assert arm[5] == pytest.approx(goal, abs=0.05)
        assert np.abs(arm[:5] - start[:5]).max() < 0.05  # the joints not named held
        # the targets stopped
        assert wait_for(lambda: not part(sim.robot, Legs).joint_mode.engaged, 5.0)
    finally:
        example.process.send_signal(signal.SIGINT)
    output = example.finish(timeout=30.0)
    assert "refused: unknown joints ['nosuch']" in output, output
    assert "refused: a position that is not finite" in output, output
    assert "back to the stand controller" in output, output
    assert wait_for(lambda: part(sim.robot, Legs).posture.standing, 5.0)
