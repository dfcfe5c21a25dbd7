"""The network capability without a network: port plans, rendered Fast DDS profiles, the
operator's environment, and the launch's refusals."""

import os
import subprocess
import xml.etree.ElementTree as ET

import pytest
from ros_harness import DRIVER_PKG, REPO

from conftest import missing
from spot_driver.network import ports, profiles
from spot_driver.network.deployment import deployment
from spot_driver.network.operator import environment

NS = {"f": profiles.NAMESPACE}


def ports_in(xml: str) -> set[int]:
    """Every real port a profile names: UDP locator ports, TCP physical and listening ports,
    portBase (TCP locators' logical ports are channel ids, not ports)."""
    root = ET.fromstring(xml)
    f = f"{{{NS['f']}}}"
    found = [e.find(f"{f}port") for e in root.iter(f"{f}udpv4")]
    found += [e.find(f"{f}physical_port") for e in root.iter(f"{f}tcpv4")]
    found += list(root.iter(f"{f}portBase"))
    found += [e for lp in root.iter(f"{f}listening_ports") for e in lp]
    return {int(e.text) for e in found if e is not None and (e.text or "").strip().isdigit()}


@pytest.mark.parametrize("mode", ["payload", "payload_tcp"])
@pytest.mark.parametrize("domain", [0, 1, 2])
def test_every_port_a_payload_announces_is_forwarded_by_the_robot(mode, domain):
    plan = ports.plan(mode, "192.168.80.3", domain)
    for index in range(4):
        xml = profiles.payload(plan, index)
        listening = ports_in(xml) - {plan.discovery_port}
        assert listening, xml
        assert all(21000 <= p <= 22000 for p in listening), listening
    assert all(21000 <= int(p) <= 22000 for _, text, _ in plan.table(4)
               for p in text.split("-"))
    if mode == "payload":
        assert all(21000 <= p <= 22000 for p in ports_in(profiles.server(plan)))


def test_tcp_mode_dials_each_launch_process_on_its_own_forwarded_port(tmp_path):
    plan = ports.plan("payload_tcp", "192.168.80.3", 0)
    driver = ET.fromstring(profiles.payload(plan, 0))
    assert [e.text for e in driver.iter(f"{{{NS['f']}}}wan_addr")] == ["192.168.80.3"]
    env = environment(["192.168.80.3"], "payload_tcp", 21811, tmp_path)
    operator = ET.parse(env["FASTRTPS_DEFAULT_PROFILES_FILE"]).getroot()
    dialled = {int(e.find("f:physical_port", NS).text) for e in operator.iter(f"{{{NS['f']}}}tcpv4")
               if e.find("f:address", NS) is not None}
    assert dialled == {plan.fixed(i)[0] for i in range(3)}
    assert not list(operator.iter(f"{{{NS['f']}}}listening_ports"))


def test_payload_profiles_announce_the_robot_address_on_their_own_ports():
    plan = ports.plan("payload", "192.168.80.3", 0)
    seen = set()
    for index in range(3):
        root = ET.fromstring(profiles.payload(plan, index))
        external = [(e.find("f:address", NS).text, int(e.find("f:port", NS).text))
                    for e in root.iter(f"{{{NS['f']}}}udpv4") if e.get("externality")]
        listening = ports_in(profiles.payload(plan, index)) - {plan.discovery_port,
                                                               ports.PORT_BASE}
        assert {a for a, _ in external} == {"192.168.80.3"}
        assert {p for _, p in external} <= listening
        assert not seen & listening, "two processes of one launch share a port"
        seen |= listening


def test_refusals_name_what_cannot_cross_the_robot():
    with pytest.raises(ports.NetworkConfigError, match="robot_ip"):
        ports.plan("payload", "", 0)
    with pytest.raises(ports.NetworkConfigError, match="not an IPv4"):
        ports.plan("payload", "robot.local", 0)
    with pytest.raises(ports.NetworkConfigError, match="unicast"):
        ports.plan("payload", "239.255.0.1", 0)
    with pytest.raises(ports.NetworkConfigError, match="21000-22000"):
        ports.plan("payload", "192.168.80.3", 0, discovery_port=11811)
    with pytest.raises(ports.NetworkConfigError,
                       match=r"ROS_DOMAIN_ID=7 .* launch with ROS_DOMAIN_ID=0 \(1 or 2\)"):
        ports.plan("payload", "192.168.80.3", 7)
    with pytest.raises(ports.NetworkConfigError, match="network must be one of"):
        ports.plan("zenoh", "192.168.80.3", 0)
    with pytest.raises(ports.NetworkConfigError, match="robot_ip"):
        ports.plan("payload_tcp", "", 0)
    assert ports.plan("local", "", 42).mode == "local"


def test_each_robot_of_a_fleet_has_its_own_discovery_server_identity(tmp_path):
    assert profiles.server_prefix("10.0.0.1") != profiles.server_prefix("10.0.0.2")
    env = environment(["10.0.0.1", "10.0.0.2"], "payload", 21811, tmp_path)
    xml = open(env["FASTRTPS_DEFAULT_PROFILES_FILE"]).read()
    root = ET.fromstring(xml)
    servers = list(root.iter(f"{{{NS['f']}}}RemoteServer"))
    assert [s.get("prefix") for s in servers] == [profiles.server_prefix("10.0.0.1"),
                                                  profiles.server_prefix("10.0.0.2")]
    assert "SUPER_CLIENT" in xml and env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "SYSTEM_DEFAULT"


def test_a_second_shells_operator_environment_leaves_the_firsts_profile_alone(tmp_path):
    """Two shells evaluating spot-operator-env for different robots get two profiles; the
    same robots give the same file, unchanged."""
    first = environment(["10.0.0.1"], "payload", 21811, tmp_path)["FASTDDS_DEFAULT_PROFILES_FILE"]
    before = open(first).read()
    second = environment(["10.0.0.2"], "payload", 21811, tmp_path)
    assert second["FASTDDS_DEFAULT_PROFILES_FILE"] != first
    assert open(first).read() == before and "10.0.0.1" in before
    again = environment(["10.0.0.1"], "payload", 21811, tmp_path)
    assert again["FASTDDS_DEFAULT_PROFILES_FILE"] == first


def test_a_deployment_renders_one_profile_per_process_and_the_server(tmp_path, monkeypatch):
    monkeypatch.setenv("ROS_DOMAIN_ID", "1")
    local = deployment("local", "", 21811, 3, str(tmp_path / "l"))
    assert local.environment(0) == {}
    network = deployment("payload", "10.1.2.3", 21811, 3, str(tmp_path / "p"))
    env = network.environment(1)
    assert env["ROS_LOCALHOST_ONLY"] == ""  # off, and rcl does not warn
    ET.parse(env["FASTRTPS_DEFAULT_PROFILES_FILE"])
    command, _ = network.server_command()
    assert command[1:] == ["-x", str(tmp_path / "p" / "discovery_server.xml")]
    assert "fast-discovery-server" in command[0]


def test_a_shell_with_the_projects_environment_can_launch_on_a_payload():
    """scripts/env.sh's default domain is one whose ports cross the robot's forward (the
    README's payload launch works from that shell); a test run still takes a domain of its
    own; no deprecation warning is set off."""
    shell = ("unset ROS_DOMAIN_ID; source scripts/env.sh >/dev/null; "
             "echo $ROS_DOMAIN_ID ${SPOT_DOMAIN_FROM_ENV:-} ${ROS_LOCALHOST_ONLY-unset}")
    domain, marker, localhost_only = subprocess.run(
        ["bash", "-c", shell], capture_output=True, text=True, cwd=REPO, check=True,
        env={k: v for k, v in os.environ.items() if k != "ROS_DOMAIN_ID"}).stdout.split()
    assert int(domain) in (0, 1, 2) and marker == "1" and localhost_only == "unset"
    ports.plan("payload", "192.168.80.3", int(domain))  # not refused
    run_tests = (REPO / "scripts" / "run_tests.sh").read_text()
    assert 'SPOT_DOMAIN_FROM_ENV:-0}" = 1' in run_tests  # tests do not inherit that default


def test_the_launch_refuses_a_payload_mode_without_robot_ip(tmp_path):
    result = subprocess.run(["ros2", "launch", "spot_driver", "spot_driver.launch.py",
                             "network:=payload", "hostname:=127.0.0.1"], capture_output=True,
                            text=True, timeout=60, cwd=REPO, stdin=subprocess.DEVNULL)
    if "ros2: command not found" in result.stderr or result.returncode == 127:
        if os.environ.get("CI"):  # scripts/setup.sh builds ros2 launch from the kit
            pytest.fail("ros2 launch is missing: scripts/setup.sh should have built it")
        missing("ros2 launch (an apt ROS 2, or the kit ../shared/vendor/ros2-tools)")
    assert result.returncode != 0
    assert "robot_ip" in result.stdout + result.stderr, result.stdout + result.stderr


def test_the_security_policy_lets_only_the_driver_and_operator_command(tmp_path):
    """config/dds/spot_policy.xml (SROS2 format; checked here against sros2's schema and XSL
    by hand, not in CI: sros2 is not on PyPI): its expressions read as DDS patterns."""
    from fnmatch import fnmatch

    root = ET.parse(DRIVER_PKG / "config" / "dds" / "spot_policy.xml").getroot()
    assert root.get("version") == "0.2.0"

    def allowed(enclave: str, kind: str, verb: str, name: str) -> bool:
        rules = root.findall(f"./enclaves/enclave[@path='{enclave}']/profiles/profile/{kind}")
        return any(rule.get(verb) == "ALLOW" and fnmatch(name, e.text)
                   for rule in rules for e in rule)

    commands = ["cmd_vel", "spot1/cmd_vel", "body_pose"]
    services = ["claim", "power_on", "spot1/stand", "estop/release", "spot1/spot_state/"
                "set_parameters"]
    for enclave in ("/spot_driver", "/operator"):
        assert all(allowed(enclave, "topics", "publish", t) for t in commands)
        assert all(allowed(enclave, "services", "request", s) for s in services)
        assert allowed(enclave, "actions", "call", "spot1/trajectory")
    assert not any(allowed("/observer", "topics", "publish", t) for t in commands)
    assert not any(allowed("/observer", "services", "request", s) for s in services)
    assert not allowed("/observer", "actions", "call", "spot1/trajectory")
    assert allowed("/observer", "topics", "subscribe", "spot1/joint_states")
    assert allowed("/observer", "services", "request", "spot1/spot_state/get_parameters")


def test_the_example_profiles_in_config_dds_are_what_the_renderer_writes():
    for name, text in profiles.examples().items():
        shipped = (DRIVER_PKG / "config" / "dds" / name).read_text()
        assert shipped == text, f"config/dds/{name} is stale: run scripts/render_dds_examples.py"
        ET.fromstring(text.split("\n", 1)[1])  # well-formed


def test_the_governance_admits_only_the_keystores_participants():
    """config/dds/governance.xml (checked here against the OMG schema sros2 ships, by hand)."""
    root = ET.parse(DRIVER_PKG / "config" / "dds" / "governance.xml").getroot()
    rule = root.find("./domain_access_rules/domain_rule")
    assert rule.findtext("allow_unauthenticated_participants") == "false"
    assert rule.findtext("enable_join_access_control") == "true"
    topic = rule.find("./topic_access_rules/topic_rule")
    assert topic.findtext("topic_expression") == "*"
    for check in ("enable_read_access_control", "enable_write_access_control"):
        assert topic.findtext(check) == "true", check
    assert topic.findtext("data_protection_kind") == "ENCRYPT"
    script = (REPO / "scripts" / "sros2_keystore.sh").read_text()
    assert "governance.xml" in script and "generate_artifacts" in script


def test_the_discovery_server_check_sees_a_bound_port_without_touching_it():
    import socket

    from spot_driver.network.health import discovery_server_listening

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        assert discovery_server_listening(port)
    assert not discovery_server_listening(port)
