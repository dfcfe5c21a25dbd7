"""`ros2 launch` and the `ros2` command line as users type them: launch with the simulated
robot, node list, topic rates, service calls, an action goal with feedback, live parameter
changes and refusals, two robots from one launch, and SIGINT/SIGTERM to a launch without a
terminal (as systemd sends it), ten times, each leaving the lease free.

Needs `ros2 launch` (an apt ROS, or the kit scripts/setup.sh builds from
../shared/vendor/ros2-tools). Without it these tests skip, except in CI, where a missing
`ros2 launch` is a failure."""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from bosdyn.client.lease import LeaseClient
from ros_harness import DRIVER_PKG, REPO, LaunchProcess, SimProcess, ros2, ros2_call
from test_body_sim import wait_for

from conftest import MISSING, PASSWORD, USERNAME, connect

KIT = REPO.parent / "shared" / "vendor" / "ros2-tools"
BAD_LINES = re.compile(r"Traceback|never retrieved|context is invalid|KeyboardInterrupt|"
                       r"process has died")
SIGTEST = f"sigtest{os.getpid()}"  # this run's own: another run's drivers are not counted
RSP_KILLED_AGAIN = re.compile(r"\[ERROR\] \[robot_state_publisher-\d+\]: process has died "
                              r"\[pid \d+, exit code -2, [^\n]*")


def _launch_available() -> bool:
    if shutil.which("ros2") is None:
        return False
    probe = subprocess.run(["python", "-c", "import launch_ros"], capture_output=True)
    return probe.returncode == 0


if not _launch_available():
    if os.environ.get("CI"):  # CI runs on a machine with the kit: setup.sh builds from it
        pytest.fail("ros2 launch is missing: scripts/setup.sh should have built it from "
                    f"{KIT}", pytrace=False)
    pytest.skip(MISSING + "ros2 launch (an apt ROS 2, or the kit ../shared/vendor/ros2-tools)",
                allow_module_level=True)


@pytest.fixture(scope="module", autouse=True)
def no_daemon_left_behind():
    """Every command here runs without the ros2 daemon; stop any the tests started anyway
    (by pid, only those of this run's ROS_DOMAIN_ID)."""
    yield
    domain = os.environ.get("ROS_DOMAIN_ID", "")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        ours = f"--ros-domain-id\0{domain}\0".encode() in cmdline or \
            f"ROS_DOMAIN_ID={domain}\0".encode() in environ
        if b"ros2cli.daemon" in cmdline and ours:
            os.kill(int(proc.name), signal.SIGTERM)


def node_names(spin_time: float = 2) -> set[str]:
    return set(ros2("node", "list", "--no-daemon", "--spin-time", str(spin_time)).stdout.split())


def topic_rate(topic: str, seconds: float = 6.0) -> float:
    """The last average `ros2 topic hz` prints after ``seconds`` (over its last 100 intervals,
    so the first seconds, when a lazily started stream fills its pipeline, drop out)."""
    process = subprocess.Popen(["ros2", "topic", "hz", topic, "--window", "100"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    time.sleep(seconds)  # sleep: the window `ros2 topic hz` measures
    os.killpg(process.pid, signal.SIGINT)
    output = process.communicate(timeout=10)[0]
    rates = re.findall(r"average rate: ([0-9.]+)", output)
    assert rates, output
    return float(rates[-1])


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    logs = tmp_path_factory.mktemp("launch")
    launch = LaunchProcess(["spot_sim", "spot_sim.launch.py", f"certs_dir:={logs / 'certs'}",
                            "arm:=true"], logs / "launch.log")
    try:
        assert wait_for(lambda: "streaming camera" in launch.output(), 30), launch.output()
        yield launch
    finally:
        assert launch.stop() == 0, launch.output()[-3000:]
        # the upstream robot_state_publisher kill by a second SIGINT (see below), seen at
        # this fixture's teardown under four lanes' load too
        output = RSP_KILLED_AGAIN.sub("", launch.output())
        assert not BAD_LINES.search(output), output[-3000:]


def test_launch_starts_every_node(launched):
    expected = {"/spot_driver", "/spot_state", "/spot_commands", "/spot_motion", "/spot_arm",
                "/spot_perception", "/spot_docking", "/spot_mission", "/spot_diagnostics",
                "/spot_description"}
    assert wait_for(lambda: expected <= node_names(), 15), node_names()


def test_topic_rates_are_the_configured_rates(launched):
    # safety bounds (the figures are the benchmarks'): not halved, not faster than configured
    # (10 % for `ros2 topic hz`'s own measurement)
    state = topic_rate("/joint_states")
    assert 50.0 / 2 <= state <= 50.0 * 1.1, state
    camera = topic_rate("/camera/frontleft/image/compressed")
    assert 15.0 / 2 <= camera <= 15.0 * 1.1, camera


def test_service_calls_and_a_trajectory_goal_with_feedback(launched):
    for name in ("claim", "power_on", "stand"):
        result = ros2_call(f"/{name}", "std_srvs/srv/Trigger")
        assert "success=True" in result.stdout, result.stdout + result.stderr
    goal = ("{target_pose: {header: {frame_id: body}, pose: {position: {x: 0.5}, "
            "orientation: {w: 1.0}}}}")
    result = ros2("action", "send_goal", "--feedback", "/trajectory",
                  "spot_msgs/action/Trajectory", goal, timeout=60)
    assert "distance_remaining" in result.stdout, result.stdout  # feedback was printed
    assert "Goal finished with status: SUCCEEDED" in result.stdout, result.stdout


def test_param_set_get_describe_and_refusals(launched):
    def param(*args: str) -> str:
        # Without the daemon each call discovers for --spin-time s twice (once to find the
        # node, once to call it): short, then wait up to --timeout s for the node to appear.
        result = ros2("param", *args, "--no-daemon", "--spin-time", "1", "--timeout", "15")
        return result.stdout + result.stderr

    assert "Set parameter successful" in param("set", "/spot_state", "robot_state_rate", "25.0")
    assert "25.0" in param("get", "/spot_state", "robot_state_rate")
    # the change took effect: neither halved nor still the 50 Hz it was (a safety bound;
    # the figure is the benchmarks')
    assert 25.0 / 2 <= topic_rate("/joint_states") <= 37.5
    assert "Set parameter successful" in param("set", "/spot_state", "robot_state_rate", "50.0")
    described = param("describe", "/spot_state", "robot_state_rate")
    assert "Min value: 0.1" in described and "Max value: 500.0" in described, described
    assert "Read only: true" in param("describe", "/spot_driver", "hostname")
    refused = param("set", "/spot_driver", "hostname", "10.0.0.1")
    assert "Setting parameter failed" in refused and "read-only" in refused, refused
    for bad in ("-1.0", "nan"):
        refused = param("set", "/spot_motion", "cmd_duration", bad)
        assert "Setting parameter failed" in refused, refused
    assert "0.25" in param("get", "/spot_motion", "cmd_duration")  # unchanged
    assert "Set parameter successful" in param("set", "/spot_motion", "cmd_duration", "0.4")
    assert "Set parameter successful" in param("set", "/spot_commands",
                                               "max_linear_velocity_x", "0.8")
    refused = param("set", "/spot_perception", "cameras", "[frontleft, nosuch]")
    assert "Setting parameter failed" in refused and "nosuch" in refused, refused
    assert "Set parameter successful" in param("set", "/spot_perception", "cameras",
                                               "[frontleft, hand]")
    assert topic_rate("/camera/hand/image/compressed", 6.0) > 10.0


def test_two_robots_from_one_launch_are_disjoint(tmp_path):
    launch = LaunchProcess(["spot_driver", "multi_robot.launch.py"], tmp_path / "multi.log",
                           env={"HOME": str(tmp_path)})
    try:
        assert wait_for(lambda: launch.output().count("streaming camera") == 2, 40), \
            launch.output()
        wanted = {"/spot1/spot_state", "/spot2/spot_state"}
        # Under CI load one robot's DDS participant can take a while to be discovered.
        assert wait_for(lambda: wanted <= node_names(spin_time=4), 60), \
            f"missing {sorted(wanted - node_names(spin_time=4))}"

        def topics() -> set[str]:
            listed = ros2("topic", "list", "--no-daemon", "--spin-time", "3").stdout
            return set(listed.split())

        def disjoint() -> bool:
            """Both robots have the same interface, each under its own namespace (/tf and
            /tf_static are shared, with prefixed frames)."""
            listed = topics()
            per_robot = [{t.removeprefix(f"/{r}") for t in listed if t.startswith(f"/{r}/")}
                         for r in ("spot1", "spot2")]
            return per_robot[0] == per_robot[1] and "/joint_states" in per_robot[0] and \
                len(per_robot[0]) > 30

        assert wait_for(disjoint, 30), topics()
        assert "spot2/" in _param_get("/spot2/spot_state", "frame_prefix")
        for robot in ("spot1", "spot2"):
            claimed = ros2_call(f"/{robot}/claim", "std_srvs/srv/Trigger")
            assert "success=True" in claimed.stdout, claimed.stdout  # each has its own lease
        echo = ros2("topic", "echo", "--once", "/spot2/joint_states",
                    "sensor_msgs/msg/JointState", timeout=20)
        assert "spot2/front_left_hip_x" in echo.stdout
    finally:
        assert launch.stop() == 0, launch.output()[-3000:]
    # launch's SIGINT reaches robot_state_publisher while it still handles the first: the
    # upstream kill the signals test below allows too (seen under four lanes' load, stop 69)
    output = RSP_KILLED_AGAIN.sub("", launch.output())
    assert not BAD_LINES.search(output), output[-3000:]


def _param_get(node: str, name: str) -> str:
    """``ros2 param get`` as a user types it. A fresh CLI process is a new DDS participant:
    the node's service may answer before its response writer has matched the CLI's reader, and
    Fast DDS then drops the answer after a bounded wait (ros2/rmw_fastrtps#390), so the CLI
    waits forever. Seen once with two robots under four lanes' load; the user types it again,
    so the test does, once."""
    args = ("param", "get", node, name, "--no-daemon", "--spin-time", "3")
    try:
        return ros2(*args, timeout=20).stdout
    except subprocess.TimeoutExpired:
        return ros2(*args, timeout=20).stdout


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    logs = tmp_path_factory.mktemp("robot")
    sim = SimProcess(logs / "certs", logs / "sim.log", USERNAME, PASSWORD)
    try:
        yield sim
    finally:
        sim.stop()


def lease_owner(sdk) -> str:
    resources = sdk.ensure_client(LeaseClient.default_service_name).list_leases(timeout=2.0)
    body = next(r for r in resources if r.resource == "mobility")
    return body.lease_owner.client_name if body.HasField("lease_owner") else ""


def driver_running() -> bool:
    """A driver of this run's signal tests (namespace SIGTEST) is still running."""
    return bool(subprocess.run(["pgrep", "-f", f"__ns:=/{SIGTEST}( |$)"], capture_output=True,
                               text=True).stdout.split())


@pytest.mark.parametrize("how", [*[f"sigint-{i}" for i in range(10)], "sigint-x2", "sigint-x3",
                                 "sigterm"])
def test_signals_to_a_terminal_less_launch_stop_cleanly(robot, tmp_path, how):
    """systemd (KillSignal=SIGINT), containers and scripts signal the whole process group;
    launch then forwards SIGINT to each node again."""
    sdk = connect(robot)
    # A driver run as a service claims the lease itself (auto_claim), as systemd users start
    # it; `ros2 service call /claim` is test_service_calls_and_a_trajectory_goal_with_feedback's
    # (here, under the parallel phase's load, the driver's answer to a fresh CLI client was once
    # lost: "failed to send response (timeout)", rmw_fastrtps, ros2/ros2#1253).
    config = tmp_path / "spot_driver.yaml"
    config.write_text((DRIVER_PKG / "config" / "spot_driver.yaml").read_text().replace(
        "auto_claim: false", "auto_claim: true"))
    launch = LaunchProcess(
        ["spot_driver", "spot_driver.launch.py", f"config_file:={config}",
         "hostname:=127.0.0.1", f"port:={robot.port}", f"certificate:={robot.ca_cert}",
         "estop_endpoint:=true", "perception:=false", f"robot_name:={SIGTEST}"],
        tmp_path / "launch.log",
        env={"BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD})
    try:
        assert wait_for(lambda: "connected to robot" in launch.output(), 20), launch.output()
        assert driver_running()
        assert wait_for(lambda: lease_owner(sdk).startswith("spot_ros2_driver"), 20), \
            launch.output()
        count = {"sigint-x2": 2, "sigint-x3": 3}.get(how, 1)
        sig = signal.SIGTERM if how == "sigterm" else signal.SIGINT
        started = time.monotonic()
        for _ in range(count):
            launch.signal_group(sig)
            time.sleep(0.05)  # sleep: signals 50 ms apart, as a user's repeated Ctrl-C
        code = launch.wait(timeout=10)
        output = launch.output()
        assert wait_for(lambda: not driver_running(), 3.0, 0.05)
        took = time.monotonic() - started
        assert took <= 3.0, took
        if count > 1:  # rclcpp uninstalls its signal handlers once it has shut down, so a
            # repeated SIGINT kills the real robot_state_publisher in its teardown (upstream,
            # rclcpp's signal_handler.cpp; the same on an apt-installed Jazzy): that one is
            # allowed, with no bad line from anything else
            output = RSP_KILLED_AGAIN.sub("", output)
        assert not BAD_LINES.search(output), output[-3000:]
        if sig == signal.SIGINT:
            assert code == 0, output[-3000:]
            assert "SIGINT: stopping" in output  # the driver shut down in order
            assert "process has finished cleanly" in output
        else:  # `ros2 launch` dies at once on SIGTERM (upstream, ros2/launch#666); the driver
            assert code in (0, 1, -15), output[-3000:]  # got SIGTERM from the group as well
        assert lease_owner(sdk) == ""  # returned
    finally:
        launch.stop()
        sdk.time_sync.stop()
    assert not driver_running(), "orphan driver process"
