"""Across the robot over TCP (``network:=payload_tcp``): for robots that do not route the
payload's own traffic back to the operator, the operator dials each of the launch's processes
through the robot's forward and everything flows over those connections. One operator, one
robot router (DNAT 21000-22000 only), one payload, as in ``test_network_e2e.py``."""

import os
import subprocess
import time

import netns
import pytest
from test_network_e2e import probe, require_namespaces, start_payload

from spot_driver.network.operator import environment


@pytest.fixture(scope="module")
def tcp_robot(tmp_path_factory):
    require_namespaces()
    tmp = tmp_path_factory.mktemp("tcp")
    with netns.Topology(robots=1, tag=f"t{os.getpid()}") as topology:
        robot = topology.fleet[0]
        launch = start_payload(robot, tmp, "network:=payload_tcp")
        try:
            deadline = time.monotonic() + 60
            while "streaming camera" not in launch.output():
                assert time.monotonic() < deadline, launch.output()[-3000:]
                time.sleep(0.2)
            operator = {**os.environ, **environment([robot.robot_ip], "payload_tcp", 21811,
                                                    tmp / "operator"), "ROS_DOMAIN_ID": "0"}
            yield topology, operator, launch
        finally:
            assert launch.stop() == 0, launch.output()[-3000:]
        assert "discovery_server" not in launch.output()  # simple discovery over TCP
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert topology.tag not in listed, listed


def _sockets(topology) -> str:
    return "".join(subprocess.run(["ip", "netns", "exec", ns, "ss", "-tanp"], capture_output=True,
                                  text=True).stdout
                   for ns in (topology.operator_ns, topology.fleet[0].payload_ns))


def test_the_operator_dials_the_driver_over_tcp_through_the_forward(tcp_robot):
    topology, operator, launch = tcp_robot
    args = ("--namespace", "/spot1", "--checks", "graph,rates,trigger,stand,cmd_vel", "--images",
            "1", "--calls", "4")
    out = probe(topology, topology.operator_ns, operator, *args)
    # One operator process: a discovery miss fails with the sockets of both ends (no second
    # process hides it).
    assert out["discovery_s"] is not None, \
        f"no joint_states over TCP: {out}\n{_sockets(topology)}\n{launch.output()[-3000:]}"
    assert out["discovery_s"] < 10, out
    assert "/spot1/power_on" in out["graph"]["services"]
    rates = out["rates"]
    for topic in ("/spot1/joint_states", "/tf", "/spot1/odometry"):
        assert rates[topic]["hz"] >= 50 / 2, (topic, rates[topic])  # not halved
    assert rates["/spot1/camera/frontleft/image/compressed"]["hz"] >= 5, rates
    assert out["trigger"]["answered"] == 4 and out["trigger"]["success"], out["trigger"]
    assert out["stand"]["success"], out
    assert out["cmd_vel"]["moved_m"] > 0.3 and out["cmd_vel"]["stopped"], out["cmd_vel"]
