"""Across the robot: drivers on payload computers behind simulated Spots' port forwards, an
operator's computer on the robots' other side (README, "Across the robot").

Network namespaces this module makes (``netns.py``): the operator, two robot routers that
forward only ``ROBOT_IP:21000-22000`` to their payloads and drop everything else inbound, and
two payloads, each running ``spot_sim.launch.py network:=payload`` (simulated robot, discovery
server, driver): ``spot1`` as launched by default, ``spot2`` with ``remote_commands:=false``.
The operator runs ``operator_probe.py`` with ``spot-operator-env``'s environment. All traffic
stays inside the namespaces; they and every process in them are removed at the end.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import netns
import pytest
from ros_harness import REPO, LaunchProcess

from conftest import missing
from spot_driver.network.operator import environment, payload_environment

KIT = REPO.parent / "shared" / "vendor" / "ros2-tools"
PROBE = str(Path(__file__).resolve().parent / "operator_probe.py")
CAMERAS = ("frontleft", "frontright", "left", "right", "back")


def require_namespaces() -> None:
    """Fail with the reason in CI, skip with it elsewhere, when this machine cannot make the
    namespaces or has no ``ros2 launch``."""
    why = netns.available()
    if why and os.environ.get("CI"):
        pytest.fail(f"across-the-robot tests cannot run: {why}")
    if why:
        missing(why)
    if not (KIT / "install.sh").is_file() and not os.environ.get("CI"):
        missing("ros2 launch (the kit ../shared/vendor/ros2-tools)")


@pytest.fixture(scope="module")
def topology():
    require_namespaces()
    with netns.Topology(robots=2) as made:
        yield made
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert made.tag not in listed, listed


def start_payload(robot, tmp: Path, *args: str, env: dict | None = None) -> LaunchProcess:
    """``env``: more environment for the payload's processes (e.g. ``SPOT_STAGE_STAMPS``)."""
    return LaunchProcess(
        ["spot_sim", "spot_sim.launch.py", "network:=payload", f"robot_ip:={robot.robot_ip}",
         f"certs_dir:={tmp / f'certs{robot.index}'}", f"robot_name:=spot{robot.index}", *args],
        tmp / f"payload{robot.index}.log",
        env={"ROS_DOMAIN_ID": "0", "HOME": str(tmp), **(env or {})},
        wrapper=netns.Topology.command(robot.payload_ns, []))


def probe(topology, host: str, env: dict, *args: str, timeout: float = 150.0) -> dict:
    """operator_probe.py on ``host``; its JSON answer."""
    result = subprocess.run(topology.command(host, [sys.executable, PROBE, *args]),
                            capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0 and lines, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def fleet(topology, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    spot1, spot2 = topology.fleet
    operator = {**os.environ, **environment([spot1.robot_ip, spot2.robot_ip], "payload", 21811,
                                            tmp / "operator"), "ROS_DOMAIN_ID": "0"}
    launches = [start_payload(spot1, tmp), start_payload(spot2, tmp, "remote_commands:=false")]
    try:
        deadline = time.monotonic() + 60
        while not all("streaming camera" in launch.output() for launch in launches):
            assert time.monotonic() < deadline, [x.output()[-2000:] for x in launches]
            time.sleep(0.2)
        yield tmp, operator, launches
    finally:
        for robot in topology.fleet:
            topology.cap(robot, None)
            topology.link(robot, True)
        codes = [launch.stop() for launch in launches]
        assert codes == [0, 0], [x.output()[-3000:] for x in launches]
    for launch in launches:
        assert "Traceback" not in launch.output(), launch.output()[-3000:]


def test_the_operator_uses_the_driver_through_the_forward_alone(topology, fleet):
    _, operator, _ = fleet
    out = probe(topology, topology.operator_ns, operator, "--namespace", "/spot1", "--checks",
                "graph,rates,trigger,estop,stand,action,param,cmd_vel", "--images", "1",
                "--calls", "8")
    assert out["discovery_s"] is not None and out["discovery_s"] < 10, out
    graph = out["graph"]
    for topic in ("/spot1/joint_states", "/tf", "/tf_static", "/spot1/odometry",
                  "/diagnostics", "/spot1/camera/frontleft/image/compressed", "/spot1/cmd_vel"):
        assert topic in graph["topics"], topic
    for service in ("/spot1/claim", "/spot1/power_on", "/spot1/stand", "/spot1/estop/gentle",
                    "/spot1/trajectory/_action/send_goal", "/spot1/spot_state/set_parameters"):
        assert service in graph["services"], service
    rates = out["rates"]
    for topic in ("/spot1/joint_states", "/tf", "/spot1/odometry"):
        assert rates[topic]["hz"] >= 50 / 2, (topic, rates[topic])  # not halved
    assert rates["/spot1/camera/frontleft/image/compressed"]["hz"] >= 15 / 2, rates
    for name in ("trigger", "estop"):
        assert out[name]["answered"] == 8 and out[name]["success"], out[name]
    assert out["power_on"]["success"] and out["stand"]["success"], out
    action = out["action"]
    assert action["accepted"] and action["success"] and action["feedback"] > 0, action
    # each change took effect: 25 Hz neither halved nor still 50; back at 50 Hz, well above
    assert out["param"][0]["set"] and 25 / 2 <= out["param"][0]["rate"] <= 37.5, out["param"]
    assert out["param"][1]["rate"] >= 1.5 * out["param"][0]["rate"], out["param"]
    assert out["cmd_vel"]["moved_m"] > 0.3 and out["cmd_vel"]["stopped"], out["cmd_vel"]


def operator_cli(topology, operator: dict, *args: str, timeout: float = 60.0) -> str:
    """A ``ros2`` command typed on the operator's computer (after ``spot-operator-env``)."""
    result = subprocess.run(topology.command(topology.operator_ns, ["ros2", *args]),
                            capture_output=True, text=True, timeout=timeout, env=operator,
                            cwd=REPO, stdin=subprocess.DEVNULL)
    return result.stdout + result.stderr


def test_the_ros2_cli_works_from_the_operator(topology, fleet):
    _, operator, _ = fleet
    listed = operator_cli(topology, operator, "topic", "list", "--no-daemon", "--spin-time", "3")
    assert "/spot1/joint_states" in listed and "/spot2/joint_states" in listed, listed
    # One call, as a user makes it: an answer lost across the namespaces fails the test
    # (subprocess.TimeoutExpired), never retried away.
    called = operator_cli(topology, operator, "service", "call", "/spot1/claim",
                          "std_srvs/srv/Trigger", timeout=15)
    assert "success=True" in called, called
    changed = operator_cli(topology, operator, "param", "set", "/spot1/spot_state",
                           "status_rate", "25.0", "--no-daemon", "--spin-time", "3")
    assert "Set parameter successful" in changed, changed
    goal = ("{target_pose: {header: {frame_id: spot1/body}, pose: {position: {x: 0.2}, "
            "orientation: {w: 1.0}}}, precise_positioning: true}")
    sent = operator_cli(topology, operator, "action", "send_goal", "--feedback",
                        "/spot1/trajectory", "spot_msgs/action/Trajectory", goal, timeout=60)
    assert "distance_remaining" in sent and "SUCCEEDED" in sent, sent


def test_the_first_topic_list_after_the_eval_lists_the_robots(topology, fleet):
    """As the README has the operator do it: eval spot-operator-env's lines in a shell, then
    ``ros2 topic list`` once, through the daemon, at once: both robots are listed (the eval
    returns when the daemon sees them)."""
    tmp, _, _ = fleet
    spot1, spot2 = topology.fleet
    script = (f'eval "$({sys.executable} -m spot_driver.network.operator {spot1.robot_ip} '
              f'{spot2.robot_ip} --dir {tmp / "shell"})" && ros2 topic list; '
              "ros2 daemon stop >/dev/null 2>&1")
    result = subprocess.run(topology.command(topology.operator_ns, ["bash", "-c", script]),
                            capture_output=True, text=True, timeout=90, cwd=REPO,
                            env={**os.environ, "ROS_DOMAIN_ID": "0"}, stdin=subprocess.DEVNULL)
    listed = result.stdout
    assert "/spot1/joint_states" in listed and "/spot2/joint_states" in listed, \
        listed + result.stderr[-2000:]
    assert "the robot's topics are visible" in result.stderr, result.stderr[-2000:]


def test_the_operator_sends_nothing_to_the_payloads_own_addresses(topology, fleet):
    """The operator reaches a payload only through its robot's forward. A laptop with a
    default route would send to the payload's own (private) addresses what it learnt of them
    in discovery: here that route is the robot, and a counter on the operator's output sees
    each such packet. The payload processes announce loopback and the robot's address only
    (Fast DDS ignores another host's loopback locators), so none is sent, while the
    operator's subscription still gets the robot's data."""
    _, operator, _ = fleet
    spot1 = topology.fleet[0]
    op = topology.operator_ns
    subnets = [f"{r.payload_ip.rsplit('.', 1)[0]}.0/24" for r in topology.fleet]
    topology.ns_run(op, "ip", "route", "add", "default", "via", spot1.robot_ip)
    for subnet in subnets:
        topology.ns_run(op, "iptables", "-A", "OUTPUT", "-d", subnet)
    echo = subprocess.Popen(topology.command(op, [
        "ros2", "topic", "echo", "--no-daemon", "/spot1/joint_states", "--field",
        "header.stamp.sec"]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=operator, cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        time.sleep(15)  # sleep: the window counted (discovery, then steady traffic)
        counters = subprocess.run(topology.command(op, ["iptables", "-L", "OUTPUT", "-v", "-n",
                                                        "-x"]), capture_output=True, text=True)
    finally:
        echo.terminate()
        received, _ = echo.communicate(timeout=15)
        for subnet in subnets:
            topology.ns_run(op, "iptables", "-D", "OUTPUT", "-d", subnet)
        topology.ns_run(op, "ip", "route", "del", "default")
    sent = {line.split()[-1]: int(line.split()[0]) for line in counters.stdout.splitlines()
            if line.split() and line.split()[-1] in subnets}
    assert sent == dict.fromkeys(subnets, 0), counters.stdout
    assert received.count("---") > 100, received[-2000:]  # 50 Hz for seconds


def test_a_capped_link_drops_image_frames_not_state(topology, fleet):
    """10 Mbit/s to the operator, who takes five compressed cameras and one raw one: images
    lose frames (counted on /diagnostics), joint_states, /tf, services and cmd_vel go on."""
    _, operator, _ = fleet
    topology.cap(topology.fleet[0], 10)
    try:
        out = probe(topology, topology.operator_ns, operator, "--namespace", "/spot1",
                    "--checks", "rates,trigger,cmd_vel", "--images", "5", "--raw-images", "1",
                    "--calls", "8", "--seconds", "8")
    finally:
        topology.cap(topology.fleet[0], None)
    rates = out["rates"]
    for topic in ("/spot1/joint_states", "/tf"):
        assert rates[topic]["hz"] >= 50 / 2, (topic, rates[topic])  # not halved
    assert out["trigger"]["answered"] == 8, out["trigger"]
    assert out["cmd_vel"]["stopped"], out["cmd_vel"]
    images = sum(rates[f"/spot1/camera/{c}/image/compressed"]["hz"] for c in CAMERAS)
    assert images > 1, rates


STATE_PERIOD_MS = 1e3 / 50  # robot_state_rate
STEP_BOUND_STATE_PERIODS = 6
TELEOP_STEPS = 25  # walk/stop cycles: 50 steps
TELEOP_LATE_MAX = 5  # a tail is more than one step in ten


def test_teleop_steps_show_in_odometry_within_a_few_state_periods(topology, fleet):
    """Teleop across the forward, five compressed cameras and one raw image streaming to the
    operator over 10 Mbit/s, nothing pinned (the simulated robot renders its cameras in
    worker processes of their own, at a lower priority): every velocity step shows in
    odometry within a few state periods plus the link's own delay (the quickest Trigger
    round trip of the same run). The path needs about two: the command across, a physics
    tick and the acceleration to show the change, the next state request, odometry back. A
    step in ten may be late (a hiccup of this shared machine, which also runs a second
    robot); a simulated robot whose velocity commands wait behind its cameras' renders made
    one step in five take 150-400 ms (issue 55), and fails."""
    _, operator, _ = fleet
    robot = topology.fleet[0]
    topology.cap(robot, 10)
    try:
        out = probe(topology, topology.operator_ns, operator, "--namespace", "/spot1",
                    "--checks", "trigger,stand,cmd_vel", "--images", "5", "--raw-images", "1",
                    "--calls", "10", "--steps", str(TELEOP_STEPS), timeout=240)
    finally:
        topology.cap(robot, None)
    assert out["stand"]["success"] and out["trigger"]["answered"] == 10, out
    link_ms = min(out["trigger"]["rtt_ms"])
    bound = STEP_BOUND_STATE_PERIODS * STATE_PERIOD_MS + link_ms
    steps = out["cmd_vel"]["step_latency_ms"]
    late = sorted(round(ms) for ms in steps if ms > bound)
    print(f"teleop steps over {bound:.0f} ms: {late}; slowest five: "
          f"{sorted(round(ms) for ms in steps)[-5:]}")
    assert len(steps) == 2 * TELEOP_STEPS, out["cmd_vel"]  # every step was seen at all
    assert len(late) <= TELEOP_LATE_MAX, (f"{len(late)} of {len(steps)} steps over {bound:.0f} ms "
                            f"(link {link_ms:.1f} ms): {late}")


def test_without_remote_commands_telemetry_crosses_and_commands_do_not(topology, fleet):
    tmp, operator, _ = fleet
    spot2 = topology.fleet[1]
    # the rates come first: 3 s of telemetry from the robot's participant, whose endpoints
    # (its services' among them) are then known; a service still unseen 3 s later is not offered
    out = probe(topology, topology.operator_ns, operator, "--namespace", "/spot2", "--checks",
                "rates,trigger,cmd_vel", "--calls", "1", "--seconds", "3", "--find-timeout", "3")
    assert out["rates"]["/spot2/joint_states"]["hz"] >= 50 / 2, out["rates"]  # not halved
    assert out["trigger"] == {"found": False}, out["trigger"]  # a remote call finds no server
    assert abs(out["cmd_vel"]["moved_m"]) < 0.01, out["cmd_vel"]
    local = {**os.environ, **payload_environment(spot2.robot_ip, "payload", 21811, "spot2",
                                                 tmp / "payload2-local", domain=0,
                                                 local_commands=True)}
    on_payload = probe(topology, spot2.payload_ns, local, "--namespace", "/spot2", "--checks",
                       "trigger", "--calls", "2")
    assert on_payload["trigger"]["answered"] == 2 and on_payload["trigger"]["success"], \
        on_payload


def test_one_robot_link_down_leaves_the_other_streaming(topology, fleet):
    _, operator, _ = fleet
    spot1 = topology.fleet[0]
    both = probe(topology, topology.operator_ns, operator, "--namespace", "/spot2", "--checks",
                 "rates", "--also", "/spot1/joint_states", "--seconds", "3")
    assert both["rates"]["/spot1/joint_states"]["hz"] >= 50 / 2, both["rates"]
    topology.link(spot1, False)
    try:
        out = probe(topology, topology.operator_ns, operator, "--namespace", "/spot2",
                    "--checks", "rates", "--also", "/spot1/joint_states", "--seconds", "5")
    finally:
        topology.link(spot1, True)
    # spot2 unaffected by spot1's cut link: not halved, and no stall of the length of a
    # timeout waiting on spot1 (seconds)
    assert out["rates"]["/spot2/joint_states"]["hz"] >= 50 / 2, out["rates"]
    assert out["rates"]["/spot2/joint_states"]["max_gap_ms"] < 1000, out["rates"]
    assert out["rates"]["/spot1/joint_states"]["hz"] == 0, out["rates"]
