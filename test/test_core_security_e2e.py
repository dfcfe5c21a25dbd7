"""Security end to end: TLS verification with clear certificate errors, credentials from the
environment or an owner-only file, and secrets never in the driver's output."""

import os
import time

import pytest
from ros_harness import DriverProcess

from conftest import PASSWORD, USERNAME, running_sim
from spot_sim.core.certs import ensure_certificates


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs")) as spot:
        yield spot


def run_until(driver: DriverProcess, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        output = driver.output()
        if text in output or driver.process.poll() is not None:
            return output
        time.sleep(0.1)
    return driver.output()


def test_missing_ca_file_exits_naming_the_certificate_parameter(sim, tmp_path):
    driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                           params={"certificate": str(tmp_path / "missing-ca.crt")})
    try:
        assert driver.process.wait(timeout=30) == 1
        output = driver.output()
        assert "missing-ca.crt" in output and "parameter 'certificate'" in output
    finally:
        driver.stop()


@pytest.mark.parametrize("which", ["other CA", "SDK default"])
def test_wrong_ca_fails_the_handshake_naming_the_certificate_parameter(sim, tmp_path, which):
    certificate = str(ensure_certificates(tmp_path / "other").ca_cert) if which == "other CA" \
        else ""
    driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                           params={"certificate": certificate} if certificate else
                           {"certificate": "''"})
    try:
        output = run_until(driver, "TLS handshake")
        assert "TLS handshake" in output and "parameter 'certificate'" in output, output
        assert "connected to robot" not in output
        assert driver.process.poll() is None  # keeps trying; never connects insecurely
    finally:
        driver.stop()


def test_credentials_file_readable_by_others_is_used_with_a_warning(sim, tmp_path):
    path = tmp_path / "robot.credentials"
    path.write_text(f"username={USERNAME}\npassword={PASSWORD}\n")
    os.chmod(path, 0o644)
    driver = DriverProcess(sim, tmp_path / "driver.log", "", "",
                           params={"credentials_file": str(path)},
                           env={"BOSDYN_CLIENT_USERNAME": None, "BOSDYN_CLIENT_PASSWORD": None})
    try:
        output = run_until(driver, "connected to robot")
        assert "connected to robot" in output, output
        assert "readable by other users" in output and "chmod 600" in output
        assert PASSWORD not in output
    finally:
        driver.stop()


def test_wrong_password_exits_without_echoing_it(sim, tmp_path):
    secret = "wrong-secret-4b1d"
    driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, secret)
    try:
        assert driver.process.wait(timeout=30) == 1
        output = driver.output()
        assert "rejected the login" in output
        assert secret not in output
    finally:
        driver.stop()
