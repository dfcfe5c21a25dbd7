"""Across the robot: the driver on a payload computer behind a simulated Spot's port forward,
an operator's computer on the robot's other side (README, "Across the robot").

Network namespaces this test makes (``netns.py``): the operator, a robot router that forwards
only ``ROBOT_IP:21000-22000`` to its payload and drops everything else inbound, and the
payload running ``spot_sim.launch.py network:=payload`` (simulated robot, discovery server,
driver). The operator runs ``operator_probe.py`` with ``spot-operator-env``'s environment.
All traffic stays inside the namespaces; they and their processes are removed at the end.
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

from spot_driver.network.operator import environment

KIT = REPO.parent / "shared" / "vendor" / "ros2-tools"
PROBE = str(Path(__file__).resolve().parent / "operator_probe.py")


def _needs(why: str) -> None:
    if why and os.environ.get("CI"):
        pytest.fail(f"across-the-robot tests cannot run: {why}")
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def topology():
    _needs(netns.available())
    with netns.Topology(robots=2) as made:
        yield made
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert made.tag not in listed, listed


def payload_domain(index: int) -> str:
    """Payloads share /dev/shm: each gets its own domain (Fast DDS's shared-memory ports
    follow the domain), and none the run's own."""
    run = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    return str([d for d in (0, 1, 2) if d != run][index])


def start_payload(topology, robot, tmp: Path, *args: str) -> LaunchProcess:
    launch = LaunchProcess(
        ["spot_driver", "spot_sim.launch.py", "network:=payload", f"robot_ip:={robot.robot_ip}",
         f"certs_dir:={tmp / f'certs{robot.index}'}", "arm:=false", *args],
        tmp / f"payload{robot.index}.log",
        env={"ROS_DOMAIN_ID": payload_domain(robot.index - 1), "HOME": str(tmp)},
        wrapper=netns.Topology.command(robot.payload_ns, []))
    return launch


def probe(topology, robots, tmp: Path, *args: str, timeout: float = 150.0) -> dict:
    """operator_probe.py on the operator's computer; its JSON answer."""
    env = dict(os.environ, **environment([r.robot_ip for r in robots], "payload", 21811,
                                         tmp / "operator"))
    env["ROS_DOMAIN_ID"] = payload_domain(robots[0].index - 1)
    result = subprocess.run(topology.command(topology.operator_ns, [sys.executable, PROBE, *args]),
                            capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0 and lines, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def one_robot(topology, tmp_path_factory):
    if not (KIT / "install.sh").is_file() and not os.environ.get("CI"):
        pytest.skip("no ros2 launch (../shared/vendor/ros2-tools)")
    tmp = tmp_path_factory.mktemp("payload")
    robot = topology.fleet[0]
    launch = start_payload(topology, robot, tmp)
    try:
        deadline = time.monotonic() + 40
        while "streaming camera" not in launch.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "streaming camera" in launch.output(), launch.output()[-3000:]
        yield robot, tmp, launch
    finally:
        topology.cap(robot, None)
        assert launch.stop() == 0, launch.output()[-3000:]


def test_the_operator_uses_the_driver_through_the_forward_alone(topology, one_robot):
    robot, tmp, launch = one_robot
    out = probe(topology, [robot], tmp, "--checks",
                "graph,rates,trigger,estop,stand,action,param,cmd_vel", "--images", "1",
                "--calls", "8")
    assert out["discovery_s"] is not None and out["discovery_s"] < 10, out
    graph = out["graph"]
    for topic in ("/joint_states", "/tf", "/tf_static", "/odometry", "/diagnostics",
                  "/camera/frontleft/image/compressed", "/cmd_vel"):
        assert topic in graph["topics"], topic
    for service in ("/claim", "/power_on", "/stand", "/estop/gentle",
                    "/trajectory/_action/send_goal", "/spot_state/set_parameters"):
        assert service in graph["services"], service
    rates = out["rates"]
    for topic in ("/joint_states", "/tf", "/odometry"):
        assert rates[topic]["hz"] >= 40, (topic, rates[topic])
    assert rates["/camera/frontleft/image/compressed"]["hz"] >= 5, rates
    for name in ("trigger", "estop"):
        assert out[name]["answered"] == 8 and out[name]["success"], out[name]
    assert out["power_on"]["success"] and out["stand"]["success"], out
    action = out["action"]
    assert action["accepted"] and action["success"] and action["feedback"] > 0, action
    assert out["param"][0]["set"] and abs(out["param"][0]["rate"] - 25) < 5, out["param"]
    assert abs(out["param"][1]["rate"] - 50) < 8, out["param"]
    assert out["cmd_vel"]["moved_m"] > 0.3 and out["cmd_vel"]["stopped"], out["cmd_vel"]
    assert "Traceback" not in launch.output()


def test_a_capped_link_drops_image_frames_not_state(topology, one_robot):
    """10 Mbit/s to the operator, who takes five compressed cameras and one raw one: images
    lose frames (counted), joint_states, /tf, services and cmd_vel keep going."""
    robot, tmp, _ = one_robot
    topology.cap(robot, 10)
    out = probe(topology, [robot], tmp, "--checks", "rates,trigger,cmd_vel", "--images", "5",
                "--raw-images", "1", "--calls", "8", "--seconds", "8")
    rates = out["rates"]
    for topic in ("/joint_states", "/tf"):
        assert rates[topic]["hz"] >= 40, (topic, rates[topic])
    assert out["trigger"]["answered"] == 8, out["trigger"]
    assert out["cmd_vel"]["stopped"], out["cmd_vel"]
    assert sum(rates[f"/camera/{c}/image/compressed"]["hz"] for c in
               ("frontleft", "frontright", "left", "right", "back")) > 1, rates
