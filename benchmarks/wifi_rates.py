"""Stream rates over a link with a round trip: delivered / configured rate of every stream the
driver publishes (robot state at 50 Hz, five cameras at 15 Hz, the lidar at 10 Hz), read by a
default-QoS subscriber, for the simulated robot's default and field profiles and for fixed
added round trips (10, 50, 100, 200 ms, half each way). Beside it, the floor: a bare SDK
client making the same requests one at a time (what a driver without pipelining gets).

    python benchmarks/wifi_rates.py     # ~5 min; writes benchmarks/results/wifi_rates.json

The simulated robot runs in its own process; everything runs on this machine.
"""

import os
import sys
import tempfile
import threading
import time

import bosdyn.client
from bosdyn.api import image_pb2, point_cloud_pb2
from bosdyn.client.image import ImageClient
from bosdyn.client.point_cloud import PointCloudClient
from bosdyn.client.robot_state import RobotStateClient

sys.path.insert(0, os.path.dirname(__file__))
from _e2e import CAMERAS, PASSWORD, USER, Subscriber, Topic, delivery, start_driver, start_sim, stop
from _results import write

from spot_driver.core import qos

STATE_HZ, CAMERA_HZ, LIDAR_HZ = 50.0, 15.0, 10.0
WARMUP_S, WINDOW_S, BARE_S = 4.0, 10.0, 4.0
LIDAR = "velodyne-point-cloud"
# name -> spot_sim arguments
LINKS = {
    "default": ("--profile", "default"),
    "field": ("--profile", "field"),
    **{f"added {ms} ms": ("--profile", "default", "--request-latency", f"{ms / 2e3}",
                          "--response-latency", f"{ms / 2e3}") for ms in (10, 50, 100, 200)},
}


def topics() -> list[Topic]:
    out = [Topic("/joint_states", "sensor_msgs/msg/JointState", STATE_HZ, qos.STATE),
           Topic("/odometry", "nav_msgs/msg/Odometry", STATE_HZ, qos.STATE)]
    out += [Topic(f"/camera/{c}/camera_info", "sensor_msgs/msg/CameraInfo", CAMERA_HZ,
                  qos.SENSOR_PROFILES["reliable"]) for c in CAMERAS]
    out.append(Topic("/lidar/points", "sensor_msgs/msg/PointCloud2", LIDAR_HZ,
                     qos.SENSOR_PROFILES["reliable"]))
    return out


def bare_sdk(port: int, ca: str) -> dict[str, float]:
    """Delivered / configured of one-at-a-time requests (the driver's requests: robot state,
    one camera's visual + depth, the lidar), each for BARE_S."""
    sdk = bosdyn.client.create_standard_sdk("wifi-rates-bare")
    sdk.load_robot_cert(ca)
    robot = sdk.create_robot("127.0.0.1")
    robot.update_secure_channel_port(port)
    robot.authenticate(USER, PASSWORD)
    robot.sync_with_directory()
    state = robot.ensure_client(RobotStateClient.default_service_name)
    images = robot.ensure_client(ImageClient.default_service_name)
    clouds = robot.ensure_client(PointCloudClient.default_service_name)
    camera = CAMERAS[0]
    image_requests = [image_pb2.ImageRequest(image_source_name=f"{camera}_fisheye_image",
                                             quality_percent=75),
                      image_pb2.ImageRequest(image_source_name=f"{camera}_depth")]
    calls = {
        "robot state": (STATE_HZ, state.get_robot_state),
        "camera": (CAMERA_HZ, lambda: images.get_image(image_requests)),
        "lidar": (LIDAR_HZ, lambda: clouds.get_point_cloud(
            [point_cloud_pb2.PointCloudRequest(point_cloud_source_name=LIDAR)])),
    }
    out = {}
    for name, (hz, call) in calls.items():
        period, done, start = 1.0 / hz, 0, time.monotonic()
        due = start
        while time.monotonic() < start + BARE_S:
            time.sleep(max(0.0, due - time.monotonic()))
            call()
            done += 1
            due = max(due + period, time.monotonic() - period)  # late: skip, do not burst
        out[name] = round(min(1.0, done / (hz * BARE_S)) * 100, 1)
    return out


def run_link(name: str, args: tuple[str, ...], subscriber: Subscriber) -> dict:
    certs = tempfile.mkdtemp(prefix="wifi_rates_")
    sim, port, ca = start_sim(certs, *args)
    threading.Thread(target=sim.stdout.read, daemon=True).start()  # never let its pipe fill
    driver = None
    try:
        floor = bare_sdk(port, ca)  # first: the robot alone
        driver = start_driver(port, ca, {
            "cameras": "[" + ",".join(CAMERAS) + "]", "camera_rate": CAMERA_HZ,
            "lidar_rate": LIDAR_HZ, "robot_state_rate": STATE_HZ,
            "enable_autonomy": "false", "enable_choreography": "false"})
        wanted = topics()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(
                subscriber.samples.get(t.name) for t in wanted):
            time.sleep(0.2)
        time.sleep(WARMUP_S)
        start = time.time()  # the subscriber stamps receipts with wall time
        time.sleep(WINDOW_S)
        end = time.time()
        got = delivery(subscriber.samples, wanted, start, end)
    finally:
        if driver is not None:
            stop(driver)
        stop(sim)
        subscriber.reset()
    cameras = [got[f"/camera/{c}/camera_info"]["delivered_percent"] for c in CAMERAS]
    return {
        "sim_args": list(args),
        "delivered_percent": {topic: value["delivered_percent"] for topic, value in got.items()},
        "summary_percent": {"robot state": min(got["/joint_states"]["delivered_percent"],
                                               got["/odometry"]["delivered_percent"]),
                            "camera": min(cameras),
                            "lidar": got["/lidar/points"]["delivered_percent"]},
        "bare_sdk_one_at_a_time_percent": floor,
    }


def main() -> None:
    subscriber = Subscriber()
    subscriber.subscribe(topics())
    runs = {}
    try:
        for name, args in LINKS.items():
            print(f"== {name}", flush=True)
            runs[name] = run_link(name, args, subscriber)
            print(runs[name]["summary_percent"], runs[name]["bare_sdk_one_at_a_time_percent"],
                  flush=True)
    finally:
        subscriber.close()
    path = write("wifi_rates", {
        "rates_hz": {"robot state": STATE_HZ, "camera": CAMERA_HZ, "lidar": LIDAR_HZ},
        "window_s": WINDOW_S, "warmup_s": WARMUP_S, "bare_window_s": BARE_S,
        "goal_percent_field": 95.0, "runs": runs})
    print(path)


if __name__ == "__main__":
    main()
