"""Property-based fuzzing of every input the driver offers (topics, services, actions), end to
end against a simulated Spot with an arm.

For every generated case: the driver stays up, the caller gets an answer in time, a refusal
carries a message, an input with a non-finite number is refused and reaches the robot as no
command at all, and every command the robot did receive is valid (``CommandLog.problems``).
"""

import json
import math
import os
import time
from collections import Counter

import pytest
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Twist, Vector3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ros_harness import REPO, DriverProcess, RosClient
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from conftest import PASSWORD, USERNAME, running_sim
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

FIGURES = REPO / ".work" / ("figures-field" if os.environ.get("SPOT_SIM_PROFILE") == "field"
                            else "figures")
CAMERAS = ("frontleft", "frontright", "left", "right", "back", "hand")
SERVICE_CASES = 100
ACTION_CASES = 50
CASES = Counter()
FUZZ = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies
SPECIAL = [math.nan, math.inf, -math.inf, 1e308, -1e308, 0.0, -0.0, 1e-300, 1e9, -1e9]
numbers = st.one_of(st.floats(-3.0, 3.0), st.floats(-1.0, 1.0), st.sampled_from(SPECIAL),
                    st.floats(allow_nan=True, allow_infinity=True))
finite = st.one_of(st.floats(-3.0, 3.0), st.sampled_from([0.0, 1e9, -1e9, 1e-300]))
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


frames = st.one_of(st.sampled_from(["odom", "vision", "body", "flat_body", "hand"]), text)


def pose_stamped(draw_frame=frames):
    def build(frame, pose):
        msg = PoseStamped(pose=pose)
        msg.header.frame_id = frame
        return msg

    return st.builds(build, draw_frame, poses)


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


# --------------------------------------------------------------------------- fixture
@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True) as sim:
        ros = RosClient("fuzz_test_client")
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log",
                               USERNAME, PASSWORD, params={"auto_claim": "true"})
        try:
            assert ros.wait_for(lambda: sim.robot.leases.owner_of("body") is not None, 20), \
                driver.output()
            yield Fuzz(sim, driver, ros, tmp_path_factory.mktemp("missions"))
            FIGURES.mkdir(parents=True, exist_ok=True)
            (FIGURES / "fuzz.json").write_text(json.dumps(
                {"cases": dict(sorted(CASES.items())), "total": sum(CASES.values()),
                 "driver_crashes": 0 if driver.process.poll() is None else 1,
                 "invalid_commands": len(sim.commands.problems(sim.clock.now_nsec())),
                 "commands_received": sim.commands.count()}, indent=2))
        finally:
            ros.close()
            output = driver.output()
            driver.stop()
        assert PASSWORD not in output


class Fuzz:
    """Calls into the driver and checks the properties every case must hold."""

    def __init__(self, sim, driver, ros, tmp) -> None:
        self.sim, self.driver, self.ros, self.tmp = sim, driver, ros, tmp
        self._clients = {}
        self._publishers = {}

    def ready(self) -> None:
        """Lease, motor power and standing, so that valid input really reaches the robot."""
        ros = self.ros
        assert ros.call(Claim, "/claim_lease", Claim.Request(take=True)).success
        for name in ("clear_behavior_fault", "power_on", "stand"):
            response = ros.call(Trigger, f"/{name}")
            assert response.success, (name, response.message)

    def alive(self) -> None:
        assert self.driver.process.poll() is None, self.driver.output()[-3000:]

    def settled_count(self, rpc: str, quiet: float = 0.1, timeout: float = 2.0) -> int:
        """The number of ``rpc`` commands once none has arrived for ``quiet`` s."""
        count, changed = len(self.sim.commands.commands(rpc)), time.monotonic()
        deadline = changed + timeout
        while time.monotonic() < min(deadline, changed + quiet):
            time.sleep(0.01)
            now = len(self.sim.commands.commands(rpc))
            if now != count:
                count, changed = now, time.monotonic()
        return count

    def no_bad_commands(self) -> None:
        problems = self.sim.commands.problems(self.sim.clock.now_nsec())
        assert not problems, problems[:5]

    def service(self, name: str, srv_type, request, invalid: bool):
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
            assert response.message, f"{name}: refusal without a message"
        if invalid:
            assert not response.success, (name, request)
            assert self.sim.commands.count() == before, (name, request)
        self.no_bad_commands()
        return response

    def goal(self, name: str, action_type, goal, invalid: bool, settle: float = 0.4):
        """Send ``goal``; cancel it after ``settle`` s if still running. Returns the result.
        A goal whose answer does not come (a loaded machine) is sent once more before the
        case fails, naming its input."""
        try:
            return self._goal(name, action_type, goal, invalid, settle)
        except AssertionError as exc:
            if "timed out" not in str(exc):
                raise
            print(f"{name}: no answer ({exc}); once more with {goal}")
        try:
            return self._goal(name, action_type, goal, invalid, settle)
        except AssertionError as exc:
            if "timed out" not in str(exc):
                raise
            raise AssertionError(f"{name}: no answer twice for {goal}") from exc

    def _goal(self, name: str, action_type, goal, invalid: bool, settle: float):
        CASES[name] += 1
        ros = self.ros
        before = self.sim.commands.count()
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = ros.action_client(action_type, name)
        handle = ros.wait_future(client.send_goal_async(goal), 10.0)
        assert handle.accepted
        result_future = handle.get_result_async()
        if not ros.wait_for(result_future.done, settle):
            ros.wait_future(handle.cancel_goal_async(), 10.0)
        result = ros.wait_future(result_future, 30.0).result
        self.alive()
        success = getattr(result, "success", getattr(result, "error_code", 1) == 0)
        message = getattr(result, "message", getattr(result, "error_string", ""))
        if not success:
            assert message, f"{name}: refusal without a message"
        if invalid:
            assert not success, (name, goal)
            assert self.sim.commands.count() == before, (name, goal)
        self.no_bad_commands()
        return result

    def publish(self, topic: str, msg_type, msg) -> None:
        CASES[topic] += 1
        publisher = self._publishers.get(topic)
        if publisher is None:
            publisher = self._publishers[topic] = self.ros.node.create_publisher(
                msg_type, topic, 10)
            assert self.ros.wait_for(lambda: publisher.get_subscription_count() > 0)
        publisher.publish(msg)


def settle_topic(fuzz: Fuzz) -> None:
    time.sleep(0.3)
    fuzz.alive()
    fuzz.no_bad_commands()


# --------------------------------------------------------------------------- topics
def test_cmd_vel(world):
    world.ready()

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(twists)
    def case(twist):
        before = world.settled_count("RobotCommand")  # the previous case's commands are in
        world.publish("/cmd_vel", Twist, twist)
        time.sleep(0.03)
        world.alive()
        if non_finite(twist.linear.x, twist.linear.y, twist.angular.z):
            sent = world.sim.commands.commands("RobotCommand")[before:]
            for command in sent:  # documented: invalid cmd_vel stops the robot
                velocity = command.request.command.synchronized_command.mobility_command \
                    .se2_velocity_request.velocity
                assert (velocity.linear.x, velocity.linear.y, velocity.angular) == (0, 0, 0)
        world.no_bad_commands()

    case()
    settle_topic(world)


def test_body_pose(world):
    world.ready()

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(poses)
    def case(pose):
        world.publish("/body_pose", Pose, pose)
        time.sleep(0.05)
        world.alive()
        world.no_bad_commands()

    case()
    settle_topic(world)


# --------------------------------------------------------------------------- services
def test_mobility_services(world):
    world.ready()

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.integers(0, 255), st.integers(0, 255), numbers, twists)
    def case(hint, stairs, height, limit):
        world.service("/locomotion_mode", SetLocomotion, SetLocomotion.Request(
            locomotion_hint=hint), invalid=False)
        world.service("/stairs_mode", SetStairsMode, SetStairsMode.Request(stairs_mode=stairs),
                      invalid=False)
        world.service("/stand_height", SetStandHeight, SetStandHeight.Request(height=height),
                      invalid=non_finite(height) or abs(height) > 0.15)
        world.service("/max_velocity", SetVelocityLimit, SetVelocityLimit.Request(
            velocity_limit=limit), invalid=non_finite(limit.linear.x, limit.linear.y,
                                                      limit.angular.z))

    case()


def test_question_grasp_and_claim_services(world):
    world.ready()

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1), st.booleans(),
           st.integers(0, 255), st.booleans())
    def case(question, code, holding, carry, take):
        answer = world.service("/mission/answer_question", AnswerQuestion,
                               AnswerQuestion.Request(question_id=question, code=code),
                               invalid=False)
        assert not answer.success  # no mission is running: the robot has no open question
        world.service("/manipulation/override_grasp", OverrideGrasp, OverrideGrasp.Request(
            holding=holding, carry_state=carry), invalid=carry > 3)
        claimed = world.service("/claim_lease", Claim, Claim.Request(take=take), invalid=False)
        assert claimed.success, claimed.message  # the driver holds it: taking again is fine

    case()


def test_trigger_services_in_random_order(world):
    world.ready()
    names = ["stand", "sit", "stop", "self_right", "rollover", "clear_behavior_fault",
             "gripper/open", "gripper/close", "arm/stop", "mission/pause", "mission/resume",
             "mission/stop", "mission/restart", "claim", "power_on"]

    @settings(FUZZ, max_examples=SERVICE_CASES)
    @given(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    def case(sequence):
        for name in sequence:
            world.service(f"/{name}", Trigger, Trigger.Request(), invalid=False)

    case()


# --------------------------------------------------------------------------- actions
def test_trajectory_action(world):
    world.ready()

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(pose_stamped(), durations)
    def case(target, duration):
        goal = Trajectory.Goal(target_pose=target, duration=duration)
        position, q = target.pose.position, target.pose.orientation
        frames = world.sim.robot.transforms_snapshot().child_to_parent_edge_map
        invalid = (non_finite(position.x, position.y, q.x, q.y, q.z, q.w)
                   or target.header.frame_id not in frames or duration.sec < 0)
        world.goal("/trajectory", Trajectory, goal, invalid)

    case()


def test_arm_actions(world):
    world.ready()
    joint_names = st.lists(st.sampled_from(["arm_sh0", "arm_sh1", "arm_el0", "arm_el1",
                                            "arm_wr0", "arm_wr1", "arm0.sh0", "bogus", ""]),
                           max_size=7)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(joint_names, st.lists(numbers, max_size=7), durations, numbers)
    def joint_move(names, positions, duration, max_velocity):
        goal = ArmJointMove.Goal(joint_names=names, positions=positions, duration=duration,
                                 max_velocity=max_velocity)
        world.goal("/arm/joint_move", ArmJointMove, goal,
                   non_finite(positions, max_velocity) or duration.sec < 0)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(pose_stamped(), durations)
    def pose(target, duration):
        position, q = target.pose.position, target.pose.orientation
        world.goal("/arm/pose", ArmPose, ArmPose.Goal(pose=target, duration=duration),
                   non_finite(position.x, position.y, position.z, q.x, q.y, q.z, q.w)
                   or duration.sec < 0)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.integers(0, 255), st.integers(0, 255), numbers, numbers)
    def posture_and_gripper(posture, command, angle, torque):
        world.goal("/arm/posture", ArmPosture, ArmPosture.Goal(posture=posture),
                   posture not in (1, 2, 3))
        world.goal("/gripper", Gripper, Gripper.Goal(command=command, angle=angle,
                                                     max_torque=torque),
                   command > 2 or non_finite(torque) or (command == 2 and non_finite(angle)))

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(joint_names, st.lists(st.lists(numbers, max_size=7), max_size=4), durations)
    def follow(names, points, start):
        trajectory = JointTrajectory(joint_names=names, points=[
            JointTrajectoryPoint(positions=p, time_from_start=Duration(sec=i + 1))
            for i, p in enumerate(points)])
        goal = FollowJointTrajectory.Goal(trajectory=trajectory)
        goal.trajectory.header.stamp.sec = max(0, start.sec)
        world.goal("/arm_controller/follow_joint_trajectory", FollowJointTrajectory, goal,
                   non_finite(points), settle=0.3)

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.one_of(st.sampled_from(CAMERAS), text), numbers, numbers, st.booleans(), numbers)
    def pick(camera, x, y, walk_only, offset):
        goal = PickObjectInImage.Goal(camera=camera, pixel=Point(x=x, y=y), walk_only=walk_only,
                                      offset_distance=offset)
        world.goal("/manipulation/pick_object_in_image", PickObjectInImage, goal,
                   non_finite(x, y, offset) or camera not in CAMERAS)

    for fuzz_case in (joint_move, pose, posture_and_gripper, follow, pick):
        fuzz_case()
        world.ready()


def test_docking_actions(world):
    world.ready()

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.integers(0, 2**32 - 1), st.integers(0, 255), numbers)
    def case(dock_id, prep, timeout):
        world.goal("/dock", Dock, Dock.Goal(dock_id=dock_id, prep_pose_behavior=prep,
                                            timeout=timeout),
                   non_finite(timeout) or timeout < 0 or prep > 3 or not 520 <= dock_id <= 539)
        world.goal("/undock", Undock, Undock.Goal(timeout=timeout),
                   non_finite(timeout) or timeout < 0)

    case()


def test_mission_action_with_malformed_files(world):
    world.ready()
    tmp = world.tmp

    @settings(FUZZ, max_examples=ACTION_CASES)
    @given(st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode)),
           st.sampled_from([".node", ".txt", ".walk", ""]), numbers, numbers,
           st.integers(0, 255), st.sampled_from(["file", "missing", "directory", "long"]))
    def case(content, suffix, linear, angular, clutter, kind):
        path = tmp / f"mission{suffix}"
        path.write_bytes(content)
        name = {"file": str(path), "missing": str(tmp / "nope.node"), "directory": str(tmp),
                "long": "m" * 5000}[kind]
        loads = world.sim.commands.count("LoadMission")
        goal = Mission.Goal(mission_file=name, max_linear_velocity=linear,
                            max_angular_velocity=angular, ground_clutter_mode=clutter)
        result = world.goal("/mission", Mission, goal,
                            invalid=non_finite(linear, angular) or linear < 0 or angular < 0
                            or kind != "file" or suffix == ".walk", settle=1.0)
        if not result.success and kind != "file":
            assert world.sim.commands.count("LoadMission") == loads

    case()


def test_every_case_left_the_robot_with_valid_commands_only(world):
    if not CASES:
        pytest.skip("summarises the fuzz cases of this module: run the whole module")
    world.alive()
    world.no_bad_commands()
