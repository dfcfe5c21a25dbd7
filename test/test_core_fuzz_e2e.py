"""Property-based fuzzing of every input the driver offers (topics, services, actions), end to
end against a simulated Spot with an arm.

Every generated case has an expected outcome, decided by an oracle that states the interface's
documented rules (README) and the robot's own facts (its enums, joint limits, cameras and docks,
asked through the SDK) without calling the driver's code:

- ``OK``: the call succeeds.
- ``REFUSED``: the call fails with a message and the robot receives no command.
- ``SENT``: the input reaches the robot as a command (the robot may still refuse it).
- ``ACCEPTED`` (actions): not refused by the driver: it succeeds, or runs until canceled.

For every case the driver stays up, the caller gets an answer in time, a refusal carries a
message, and every command the robot did receive is valid (``CommandLog.problems``).
"""

import json
import math
import os
import time
from collections import Counter

import pytest
from action_msgs.msg import GoalStatus
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import nodes_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from bosdyn.client.docking import DockingClient
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.image import ImageClient
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.robot_state import RobotStateClient
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Twist, Vector3
from google.protobuf import text_format
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ros_harness import REPO, DriverProcess, RosClient
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from conftest import PASSWORD, USERNAME, connect, running_sim
from spot_driver.core.errors import INTERNAL
from spot_msgs.action import (
    ArmJointMove,
    ArmPose,
    ArmPosture,
    Dock,
    Gripper,
    Mission,
    PickObjectInImage,
    Trajectory,
    Undock,
)
from spot_msgs.srv import (
    AnswerQuestion,
    Claim,
    OverrideGrasp,
    SetLocomotion,
    SetStairsMode,
    SetStandHeight,
    SetVelocityLimit,
)
from spot_sim.body.arm.kinematics import GRIPPER_LIMITS, JOINT_LIMITS

FIGURES = REPO / ".work" / ("figures-field" if os.environ.get("SPOT_SIM_PROFILE") == "field"
                            else "figures")
CAMERAS = ("frontleft", "frontright", "left", "right", "back", "hand")
SERVICE_CASES = 100
ACTION_CASES = 50
CASES = Counter()
FUZZ = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
OK, REFUSED, SENT, ACCEPTED = "ok", "refused", "sent", "accepted"
PROBE_HEIGHT = 0.013  # m: the valid body pose sent after an invalid one (its proof of arrival)

# The interface's documented rules (README) and Spot's published numbers.
ROBOT_MAX_VELOCITY = (1.6, 0.5, 1.5)  # m/s forward, m/s sideways, rad/s turning
BODY_HEIGHT = 0.15  # m, body height offset either way
BODY_TILT = 0.5  # rad, body roll or pitch offset
TRAJECTORY_DISTANCE, TRAJECTORY_DURATION = 30.0, 300.0  # m, s
ARM = ("sh0", "sh1", "el0", "el1", "wr0", "wr1")
ARM_NAMES = {**{f"arm_{j}": i for i, j in enumerate(ARM)},
             **{f"arm0.{j}": i for i, j in enumerate(ARM)}}

# --------------------------------------------------------------------------- strategies
SPECIAL = [math.nan, math.inf, -math.inf, 1e308, -1e308, 0.0, -0.0, 1e-300, 1e9, -1e9]
finite = st.one_of(st.floats(-3.0, 3.0), st.floats(allow_nan=False, allow_infinity=False))
numbers = st.one_of(st.floats(-3.0, 3.0), st.floats(-1.0, 1.0), st.sampled_from(SPECIAL),
                    st.floats(allow_nan=True, allow_infinity=True))
text = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
            max_size=30),
    st.sampled_from(["", "odom", "vision", "body", "flat_body", "hand", "frontleft", "back",
                     "hand_color_image", "x" * 5000, "../../etc/passwd", "odom ", "ODOM"]))
durations = st.one_of(
    st.builds(Duration, sec=st.integers(0, 10), nanosec=st.integers(0, 999_999_999)),
    st.builds(Duration, sec=st.integers(-2**31, 2**31 - 1), nanosec=st.integers(0, 2**32 - 1)))
quaternions = st.builds(Quaternion, x=numbers, y=numbers, z=numbers, w=numbers)
poses = st.builds(Pose, position=st.builds(Point, x=numbers, y=numbers, z=numbers),
                  orientation=quaternions)
twists = st.builds(Twist, linear=st.builds(Vector3, x=numbers, y=numbers, z=numbers),
                   angular=st.builds(Vector3, x=numbers, y=numbers, z=numbers))
# Valid input must be drawn often enough for the "valid is served" direction to be exercised.
small = st.floats(-0.3, 0.3)
small_poses = st.builds(Pose, position=st.builds(Point, x=small, y=small, z=st.floats(-0.1, 0.1)),
                        orientation=st.builds(Quaternion, x=st.floats(-0.1, 0.1),
                                              y=st.floats(-0.1, 0.1), z=st.floats(-1, 1),
                                              w=st.floats(0.5, 1.0)))
frames = st.one_of(st.sampled_from(["odom", "vision", "body", "flat_body", "hand"]), text)


def pose_stamped(draw_frame=frames):
    def build(frame, pose):
        msg = PoseStamped(pose=pose)
        msg.header.frame_id = frame
        return msg

    return st.builds(build, draw_frame, st.one_of(poses, small_poses))


def non_finite(*values) -> bool:
    """Whether any number in ``values`` (numbers or ROS messages, recursively) is not finite."""
    for value in values:
        if isinstance(value, float) and not math.isfinite(value):
            return True
        if isinstance(value, (list, tuple)) and non_finite(*value):
            return True
        if hasattr(value, "get_fields_and_field_types"):
            if non_finite(*(getattr(value, f) for f in value.get_fields_and_field_types())):
                return True
        if hasattr(value, "tolist") and non_finite(*value.tolist()):
            return True
    return False


def assert_refusal(name: str, message: str) -> None:
    """A refusal says why, and is not the driver's sentence for an exception nobody expected
    (``errors.INTERNAL``): a crash does not count as a refusal."""
    assert message, f"{name}: refusal without a message"
    assert not message.startswith(INTERNAL), f"{name}: a crash, not a refusal: {message}"


def seconds(duration: Duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


def quat_ok(q: Quaternion) -> bool:
    """Finite and of non-zero length."""
    return not non_finite(q) and math.hypot(q.w, q.x, q.y, q.z) >= 1e-6


def arm_order(names: list[str]) -> list[int] | None:
    """Each name's arm joint (either naming), if the names are the six joints once each."""
    order = [ARM_NAMES.get(n) for n in names]
    return order if None not in order and sorted(order) == list(range(6)) else None


def within_arm_limits(positions, order) -> bool:
    q = [0.0] * 6
    for joint, value in zip(order, positions, strict=True):
        q[joint] = value
    return all(low - 1e-9 <= v <= high + 1e-9 for v, (low, high) in zip(q, JOINT_LIMITS,
                                                                      strict=True))


def tilt(q: Quaternion) -> float:
    """The larger of roll and pitch (rad) of a non-zero quaternion."""
    rotation = Quat(q.w, q.x, q.y, q.z)
    rotation.normalize()
    return max(abs(rotation.to_roll()), abs(rotation.to_pitch()))


def unpacked_params(command) -> spot_command_pb2.MobilityParams:
    params = spot_command_pb2.MobilityParams()
    command.synchronized_command.mobility_command.params.Unpack(params)
    return params


# --------------------------------------------------------------------------- fixture
@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True) as sim:
        ros = RosClient("fuzz_test_client")
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log",
                               USERNAME, PASSWORD,
                               # a loaded machine's stall must not read as an outage in the
                               # middle of a case (outage detection is test_core_resilience_e2e's)
                               params={"auto_claim": "true", "link_timeout": 5.0})
        sdk = connect(sim)  # the oracle's questions to the robot (cameras, docks)
        try:
            assert ros.wait_for(lambda: sim.robot.leases.owner_of("body") is not None, 20), \
                driver.output()
            yield Fuzz(sim, driver, ros, sdk, tmp_path_factory.mktemp("missions"))
            problems = sim.commands.problems(sim.clock.now_nsec())
            FIGURES.mkdir(parents=True, exist_ok=True)
            (FIGURES / "fuzz.json").write_text(json.dumps(
                {"cases": dict(sorted(CASES.items())), "total": sum(CASES.values()),
                 "driver_crashes": 0 if driver.process.poll() is None else 1,
                 "invalid_commands": len(problems),
                 "commands_received": sim.commands.count()}, indent=2))
            # every case of the module: the driver stayed up and sent nothing invalid
            assert driver.process.poll() is None, driver.output()[-3000:]
            assert not problems, problems[:5]
        finally:
            sdk.time_sync.stop()
            ros.close()
            output = driver.output()
            driver.stop()
        assert PASSWORD not in output


class Fuzz:
    """Calls into the driver and checks the properties every case must hold."""

    def __init__(self, sim, driver, ros, sdk, tmp) -> None:
        self.sim, self.driver, self.ros, self.sdk, self.tmp = sim, driver, ros, sdk, tmp
        self._clients = {}
        self._publishers = {}
        self._image_sizes = None

    # ---- what the robot says about itself (the oracle's facts)
    def image_size(self, camera: str) -> tuple[int, int]:
        """(cols, rows) of the image a pick on ``camera`` is aimed in."""
        if self._image_sizes is None:
            sources = self.sdk.ensure_client(ImageClient.default_service_name) \
                .list_image_sources()
            self._image_sizes = {s.name: (s.cols, s.rows) for s in sources}
        source = "hand_color_image" if camera == "hand" else f"{camera}_fisheye_image"
        return self._image_sizes[source]

    def dock_ids(self) -> list[tuple[int, int]]:
        return [(r.id_start, r.id_end) for r in
                self.sdk.ensure_client(DockingClient.default_service_name).get_docking_config()]

    def snapshot(self):
        """The frame tree of the robot's state (what goals may name; the cameras' frames come
        with their images, not here)."""
        return self.sdk.ensure_client(RobotStateClient.default_service_name) \
            .get_robot_state().kinematic_state.transforms_snapshot

    def frames(self) -> dict:
        return self.snapshot().child_to_parent_edge_map

    # ---- checks
    def ready(self) -> None:
        """Lease, motor power and standing, so that valid input really reaches the robot."""
        ros = self.ros
        assert ros.call(Claim, "/claim_lease", Claim.Request(take=True)).success
        for name in ("clear_behavior_fault", "power_on", "stand"):
            response = ros.call(Trigger, f"/{name}")
            assert response.success, (name, response.message)

    def alive(self) -> None:
        assert self.driver.process.poll() is None, self.driver.output()[-3000:]

    def no_bad_commands(self) -> None:
        problems = self.sim.commands.problems(self.sim.clock.now_nsec())
        assert not problems, problems[:5]

    def service(self, name: str, srv_type, request, expect: str | None):
        CASES[name] += 1
        before = self.sim.commands.count()
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.ros.node.create_client(srv_type, name)
            assert client.wait_for_service(timeout_sec=10)
        future = client.call_async(request)
        assert self.ros.wait_for(future.done, 20.0), f"{name}: no answer"
        response = future.result()
        self.alive()
        if not response.success:
            assert_refusal(name, response.message)
        if expect == OK:
            assert response.success, (name, request, response.message)
        elif expect == REFUSED:
            assert not response.success, (name, request)
            assert self.sim.commands.count() == before, (name, request)
        self.no_bad_commands()
        return response

    def goal(self, name: str, action_type, goal, expect: str, settle: float = 0.4):
        """Send ``goal``; cancel it after ``settle`` s if still running. Returns the result.
        Every goal is answered: on loopback a lost answer is a defect, never retried."""
        CASES[name] += 1
        ros = self.ros
        before = self.sim.commands.count()
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = ros.action_client(action_type, name)
        handle = ros.wait_future(client.send_goal_async(goal), 10.0)
        assert handle.accepted
        result_future = handle.get_result_async()
        canceled = False
        if not ros.wait_for(result_future.done, settle):
            ros.wait_future(handle.cancel_goal_async(), 10.0)
            canceled = True
        answer = ros.wait_future(result_future, 30.0)
        result = answer.result
        self.alive()
        success = getattr(result, "success", getattr(result, "error_code", 1) == 0)
        message = getattr(result, "message", getattr(result, "error_string", ""))
        if not success:
            assert_refusal(name, message)
        sent = self.sim.commands.count() > before
        if expect == REFUSED:
            assert not success, (name, goal)
            assert not sent, (name, goal)
        elif expect == SENT:
            assert sent, (name, goal, message)
        elif expect == ACCEPTED:
            assert success or (canceled and answer.status == GoalStatus.STATUS_CANCELED), \
                (name, goal, message)
        self.no_bad_commands()
        return result

    def publisher(self, topic: str, msg_type):
        publisher = self._publishers.get(topic)
        if publisher is None:
            publisher = self._publishers[topic] = self.ros.publisher(msg_type, topic)
        return publisher

    def next_command(self, before: int, rpc: str = "RobotCommand"):
        """The first ``rpc`` command after the first ``before`` ones (waits up to 5 s)."""
        assert self.ros.wait_for(lambda: self.sim.commands.count(rpc) > before, 5.0), \
            f"no {rpc} reached the robot"
        return self.sim.commands.commands(rpc)[before].request


# --------------------------------------------------------------------------- topics
def test_cmd_vel(world):
    """Finite: sent as it is, clamped to the limit sent with it (never above the robot's).
    Not finite: a zero-velocity command (documented: invalid cmd_vel stops the robot)."""
    world.ready()
    publisher = world.publisher("/cmd_vel", Twist)

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(twists)
    def case(twist):
        CASES["/cmd_vel"] += 1
        before = world.sim.commands.count("RobotCommand")
        publisher.publish(twist)
        command = world.next_command(before)
        world.alive()
        request = command.command.synchronized_command.mobility_command.se2_velocity_request
        sent = (request.velocity.linear.x, request.velocity.linear.y, request.velocity.angular)
        limit = unpacked_params(command.command).vel_limit.max_vel
        limits = (limit.linear.x, limit.linear.y, limit.angular)
        assert all(0 < lim <= top for lim, top in zip(limits, ROBOT_MAX_VELOCITY, strict=True))
        wanted = (twist.linear.x, twist.linear.y, twist.angular.z)
        if non_finite(*wanted):
            assert sent == (0.0, 0.0, 0.0), sent
        else:
            clamped = tuple(max(-m, min(m, v)) for v, m in zip(wanted, limits, strict=True))
            assert sent == pytest.approx(clamped, rel=1e-9, abs=1e-12), (wanted, sent)
        world.no_bad_commands()

    case()


def test_arm_cmd_vel(world):
    """Finite: an arm velocity command, each vector clamped to its norm limit (0.5 m/s,
    1 rad/s). Not finite: nothing sent, and the driver's warning names the fields (each such
    case waits for its warning: the topic keeps only the newest message, so a probe sent
    after it could replace it unread)."""
    world.ready()
    publisher = world.publisher("/arm/cmd_vel", Twist)
    refusal = "arm/cmd_vel ignored: arm velocity linear"

    @settings(FUZZ, max_examples=SERVICE_CASES // 2)
    @given(st.builds(Twist, linear=st.builds(Vector3, x=finite, y=finite, z=finite),
                     angular=st.builds(Vector3, x=finite, y=finite, z=finite)))
    def case(twist):
        CASES["/arm/cmd_vel"] += 1
        before = world.sim.commands.count("RobotCommand")
        publisher.publish(twist)
        command = world.next_command(before).command.synchronized_command.arm_command
        velocity = command.arm_velocity_command
        linear = velocity.cartesian_velocity.velocity_in_frame_name
        angular = velocity.angular_velocity_of_hand_rt_odom_in_hand
        for sent, vector, limit in (((linear.x, linear.y, linear.z), twist.linear, 0.5),
                                    ((angular.x, angular.y, angular.z), twist.angular, 1.0)):
            wanted = (vector.x, vector.y, vector.z)
            norm = math.sqrt(sum(v * v for v in wanted))
            scale = 1.0 if norm <= limit else limit / norm
            assert sent == pytest.approx(tuple(v * scale for v in wanted), rel=1e-9,
                                         abs=1e-12), (wanted, sent)
        world.alive()

    case()
    for field, value in (("x", math.nan), ("y", math.inf), ("z", -math.inf)):
        CASES["/arm/cmd_vel"] += 1
        time.sleep(2.1)  # sleep: the driver's warning is throttled to one in 2 s
        before = world.sim.commands.count("RobotCommand")
        logged = world.driver.output().count(refusal)
        twist = Twist()
        setattr(twist.angular, field, value)
        publisher.publish(twist)
        assert world.ros.wait_for(lambda n=logged: world.driver.output().count(refusal) > n,
                                  5.0), world.driver.output()[-2000:]
        assert world.sim.commands.count("RobotCommand") == before  # nothing was sent
    world.no_bad_commands()


def test_body_pose(world):
    """Within the offsets (finite, height within 0.15 m, roll and pitch within 0.5 rad, a
    quaternion of non-zero length): a stand command with that height. Otherwise nothing."""
    world.ready()
    publisher = world.publisher("/body_pose", Pose)

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.one_of(poses, small_poses))
    def case(pose):
        CASES["/body_pose"] += 1
        before = world.sim.commands.count("RobotCommand")
        q = pose.orientation
        valid = (not non_finite(pose) and abs(pose.position.z) <= BODY_HEIGHT and quat_ok(q)
                 and tilt(q) <= BODY_TILT)
        publisher.publish(pose)
        if not valid:
            # A valid pose after it, on the same reliable topic, arrives after it: when the
            # robot's next command is the probe's, the invalid pose was read and sent nothing
            # (proof it arrived, not a quiet spell).
            pose = Pose()
            pose.position.z = PROBE_HEIGHT
            pose.orientation.w = 1.0
            publisher.publish(pose)
        command = world.next_command(before)
        params = unpacked_params(command.command)
        offset = params.body_control.base_offset_rt_footprint.points[0].pose
        assert offset.position.z == pytest.approx(pose.position.z, abs=1e-9)
        world.alive()
        world.no_bad_commands()

    case()


# --------------------------------------------------------------------------- services
def test_mobility_services(world):
    world.ready()
    hints = set(spot_command_pb2.LocomotionHint.values()) - {0}
    stairs_modes = set(spot_command_pb2.MobilityParams.StairsMode.values()) - {0}

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.integers(0, 12), st.integers(0, 255), st.one_of(numbers, st.floats(-0.15, 0.15)),
           st.one_of(twists, st.builds(Twist, linear=st.builds(
               Vector3, x=st.floats(0.1, 1.6), y=st.floats(0.1, 0.5)),
               angular=st.builds(Vector3, z=st.floats(0.1, 1.5)))))
    def case(hint, stairs, height, limit):
        world.service("/locomotion_mode", SetLocomotion, SetLocomotion.Request(
            locomotion_hint=hint), OK if hint in hints else REFUSED)
        world.service("/stairs_mode", SetStairsMode, SetStairsMode.Request(stairs_mode=stairs),
                      OK if stairs in stairs_modes else REFUSED)
        world.service("/stand_height", SetStandHeight, SetStandHeight.Request(height=height),
                      OK if math.isfinite(height) and abs(height) <= BODY_HEIGHT else REFUSED)
        wanted = (limit.linear.x, limit.linear.y, limit.angular.z)
        valid = all(math.isfinite(v) and 0 < v <= top
                    for v, top in zip(wanted, ROBOT_MAX_VELOCITY, strict=True))
        world.service("/max_velocity", SetVelocityLimit, SetVelocityLimit.Request(
            velocity_limit=limit), OK if valid else REFUSED)

    case()


def test_question_grasp_and_claim_services(world):
    world.ready()

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1), st.booleans(),
           st.integers(0, 255), st.booleans())
    def case(question, code, holding, carry, take):
        answer = world.service("/mission/answer_question", AnswerQuestion,
                               AnswerQuestion.Request(question_id=question, code=code), None)
        assert not answer.success  # no mission is running: the robot has no open question
        world.service("/manipulation/override_grasp", OverrideGrasp, OverrideGrasp.Request(
            holding=holding, carry_state=carry), REFUSED if carry > 3 else OK)
        world.service("/claim_lease", Claim, Claim.Request(take=take), OK)  # the driver holds it

    case()


def test_trigger_services_in_random_order(world):
    """With the lease and power: every posture, gripper and arm service succeeds in any order;
    the mission services are refused (no mission goal is running)."""
    world.ready()
    names = ["stand", "sit", "stop", "self_right", "rollover", "clear_behavior_fault",
             "gripper/open", "gripper/close", "arm/stop", "mission/pause", "mission/resume",
             "mission/stop", "mission/restart", "claim", "power_on"]

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    def case(sequence):
        for name in sequence:
            world.service(f"/{name}", Trigger, Trigger.Request(),
                          REFUSED if name.startswith("mission/") else OK)

    case()


# --------------------------------------------------------------------------- actions
def test_trajectory_action(world):
    world.ready()

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(pose_stamped(), durations)
    def case(target, duration):
        goal = Trajectory.Goal(target_pose=target, duration=duration)
        world.goal("/trajectory", Trajectory, goal, trajectory_outcome(world, target, duration))

    case()


def trajectory_outcome(world, target: PoseStamped, duration: Duration) -> str:
    """SENT for a finite pose in a frame of the robot's tree, within 30 m of the body, and a
    duration from 0 (the driver's choice) to 300 s."""
    p, q, frame = target.pose.position, target.pose.orientation, target.header.frame_id
    snapshot = world.snapshot()
    if non_finite(p) or not quat_ok(q) or frame not in snapshot.child_to_parent_edge_map:
        return REFUSED
    if not 0 <= seconds(duration) <= TRAJECTORY_DURATION:
        return REFUSED
    goal = SE3Pose(p.x, p.y, p.z, Quat(q.w, q.x, q.y, q.z))
    if frame not in ("odom", "vision"):
        goal = get_a_tform_b(snapshot, "odom", frame) * goal
        frame = "odom"
    body = get_a_tform_b(snapshot, frame, "body")
    distance = math.hypot(goal.x - body.x, goal.y - body.y)
    return SENT if distance <= TRAJECTORY_DISTANCE - 0.1 else (
        REFUSED if distance > TRAJECTORY_DISTANCE + 0.1 or not math.isfinite(distance)
        else None)


def test_arm_actions(world):
    world.ready()
    joint_names = st.one_of(
        st.lists(st.sampled_from(["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0",
                                  "arm_wr1", "arm0.sh0", "bogus", "", "arm_f1x"]), max_size=7),
        st.permutations([f"arm_{j}" for j in ARM]), st.just([]))
    in_limits = st.tuples(*(st.floats(low, high) for low, high in JOINT_LIMITS)).map(list)
    positions = st.one_of(st.lists(numbers, max_size=7), in_limits)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(joint_names, positions, durations, st.one_of(numbers, st.just(0.0)))
    def joint_move(names, values, duration, max_velocity):
        goal = ArmJointMove.Goal(joint_names=names, positions=values, duration=duration,
                                 max_velocity=max_velocity)
        order = arm_order(names or [f"arm_{j}" for j in ARM])
        valid = (order is not None and len(values) == len(order) and not non_finite(values)
                 and within_arm_limits(values, order) and seconds(duration) >= 0
                 and math.isfinite(max_velocity) and max_velocity >= 0)
        world.goal("/arm/joint_move", ArmJointMove, goal, SENT if valid else REFUSED)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(pose_stamped(), durations)
    def pose(target, duration):
        p, q = target.pose.position, target.pose.orientation
        valid = (not non_finite(p) and quat_ok(q) and target.header.frame_id in world.frames()
                 and seconds(duration) >= 0)
        world.goal("/arm/pose", ArmPose, ArmPose.Goal(pose=target, duration=duration),
                   SENT if valid else REFUSED)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.integers(0, 255), st.integers(0, 5), st.one_of(numbers, st.floats(-1.6, 0.0)),
           st.one_of(numbers, st.floats(0.0, 5.0)))
    def posture_and_gripper(posture, command, angle, torque):
        world.goal("/arm/posture", ArmPosture, ArmPosture.Goal(posture=posture),
                   SENT if posture in (1, 2, 3) else REFUSED)
        opened, closed = GRIPPER_LIMITS
        angle_ok = math.isfinite(angle) and opened - 1e-6 <= angle <= closed + 1e-6
        valid = (command <= 2 and math.isfinite(torque) and torque >= 0
                 and (command != 2 or angle_ok))
        world.goal("/gripper", Gripper, Gripper.Goal(command=command, angle=angle,
                                                     max_torque=torque),
                   SENT if valid else REFUSED)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(joint_names, st.one_of(st.lists(st.lists(numbers, max_size=7), max_size=4),
                                  st.lists(in_limits, min_size=1, max_size=3)),
           st.one_of(durations, st.just(Duration())))
    def follow(names, points, start):
        trajectory = JointTrajectory(joint_names=names, points=[
            JointTrajectoryPoint(positions=p, time_from_start=Duration(sec=i + 1))
            for i, p in enumerate(points)])
        goal = FollowJointTrajectory.Goal(trajectory=trajectory)
        goal.trajectory.header.stamp.sec = stamp = max(0, start.sec)
        order = arm_order(names)
        valid = (order is not None and points and all(len(p) == 6 for p in points)
                 and not non_finite(points)
                 and all(within_arm_limits(p, order) for p in points))
        if not valid or (stamp and stamp + len(points) < time.time()):  # ended before sent
            expect = REFUSED
        else:  # started now (stamp 0) or later: accepted, and sent once its start comes
            expect = SENT if stamp == 0 else ACCEPTED
        world.goal("/arm_controller/follow_joint_trajectory", FollowJointTrajectory, goal,
                   expect, settle=0.3)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.one_of(st.sampled_from(CAMERAS), text), st.one_of(numbers, st.floats(0, 479)),
           st.one_of(numbers, st.floats(0, 479)), st.booleans(),
           st.one_of(numbers, st.floats(0, 1)))
    def pick(camera, x, y, walk_only, offset):
        goal = PickObjectInImage.Goal(camera=camera, pixel=Point(x=x, y=y), walk_only=walk_only,
                                      offset_distance=offset)
        valid = camera in CAMERAS and math.isfinite(offset) and offset >= 0
        if valid:
            cols, rows = world.image_size(camera)
            valid = math.isfinite(x) and math.isfinite(y) and 0 <= x < cols and 0 <= y < rows
        world.goal("/manipulation/pick_object_in_image", PickObjectInImage, goal,
                   SENT if valid else REFUSED)

    for fuzz_case in (joint_move, pose, posture_and_gripper, follow, pick):
        fuzz_case()
        world.ready()


def test_docking_actions(world):
    world.ready()
    ranges = world.dock_ids()
    assert ranges

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.one_of(st.integers(0, 2**32 - 1), st.integers(515, 545)), st.integers(0, 6),
           st.one_of(numbers, st.floats(1.0, 60.0)))
    def case(dock_id, prep, timeout):
        timeout_ok = math.isfinite(timeout) and 0 <= timeout < 3600  # 0: the default
        known = any(low <= dock_id <= high for low, high in ranges)
        valid = timeout_ok and prep <= docking_pb2.PREP_POSE_ONLY_POSE and known
        world.goal("/dock", Dock, Dock.Goal(dock_id=dock_id, prep_pose_behavior=prep,
                                            timeout=timeout), SENT if valid else REFUSED)
        world.goal("/undock", Undock, Undock.Goal(timeout=timeout),
                   SENT if timeout_ok else REFUSED)

    case()


MISSION = 'name: "pause"\nsleep { seconds: 0.2 }\n'  # a text-format bosdyn.api.mission.Node


def holds_a_mission(content: bytes) -> bool:
    """Whether a mission file's bytes are a bosdyn.api.mission.Node (text format or binary)
    with a node type: the file format the README documents."""
    root = nodes_pb2.Node()
    try:
        text_format.Parse(content.decode("utf-8"), root)
    except (UnicodeDecodeError, text_format.ParseError):
        root.Clear()
        try:
            root.ParseFromString(content)
        except DecodeError:
            return False
    return root.WhichOneof("type") is not None


def test_mission_action_with_malformed_files(world):
    world.ready()
    tmp = world.tmp

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode),
                     st.just(MISSION.encode())),
           st.sampled_from([".node", ".txt", ".walk", ""]),
           st.one_of(numbers, st.just(0.0), st.floats(0.1, 1.0)),
           st.one_of(numbers, st.just(0.0), st.floats(0.1, 1.0)),
           st.integers(0, 4), st.sampled_from(["file", "missing", "directory", "long"]))
    def case(content, suffix, linear, angular, clutter, kind):
        path = tmp / f"mission{suffix}"
        path.write_bytes(content)
        name = {"file": str(path), "missing": str(tmp / "nope.node"), "directory": str(tmp),
                "long": "m" * 5000}[kind]
        goal = Mission.Goal(mission_file=name, max_linear_velocity=linear,
                            max_angular_velocity=angular, ground_clutter_mode=clutter)
        valid = (kind == "file" and suffix != ".walk" and holds_a_mission(content)
                 and all(math.isfinite(v) and v >= 0 for v in (linear, angular))
                 and clutter in (0, 1, 2))
        world.goal("/mission", Mission, goal, SENT if valid else REFUSED, settle=1.0)

    case()
