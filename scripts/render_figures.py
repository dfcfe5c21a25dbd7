"""Fill the docs' figure tables from benchmarks/results/*.json: every table between
``<!-- figures:NAME -->`` and ``<!-- /figures:NAME -->`` in README.md or doc/*.md is rendered
by ``RENDER[NAME]`` from the JSON the benchmarks wrote, never typed by hand. ``make bench``
runs this after the benchmarks; ``test/test_figures_units.py`` fails when a page differs from what
the committed JSON renders.

    python scripts/render_figures.py          # rewrite the pages, copy the tests' screenshots
    python scripts/render_figures.py --check  # exit 1 when a page is stale

It also copies the screenshots a test run judged (``.work/figures/rviz_spot.png``) into
doc/images.
"""

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGES = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
BLOCK = re.compile(r"(<!-- figures:(\w+) -->\n)(.*?)(<!-- /figures:\2 -->)", re.S)


def load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def num(value: float, digits: int = 1) -> str:
    """A figure with ``digits`` decimals and thousands separators (no negative zero)."""
    return f"{round(value, digits) + 0.0:,.{digits}f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def measured(data: dict) -> str:
    """Where and when a table's figures were measured (every benchmark JSON records it)."""
    machine = data["machine"]
    return (f"\nMeasured {data['measured_at'][:10]} on {machine['cores']} cores "
            f"({machine['cpu']}), Python {machine['python']}.\n")


def graph_nav_upload() -> str:
    d = load("graph_nav_upload")
    parse = d["parse_ms"]
    rows = [
        [f"parse the {d['waypoints']} snapshots (floor) / copy the bytes",
         f"{num(parse)} ms / {num(d['copy_ms'])} ms", "1"],
        ["`read_map` (read and check the directory)", f"{num(d['read_map_ms'])} ms",
         f"{num(d['read_map_ms'] / parse)} x parse"],
        ["upload as `graph_nav/upload_map` does (batched `UploadSnapshots`)",
         f"{num(d['upload_ms'])} ms ({num(d['upload_mb_per_s'], 0)} MB/s)",
         f"{num(d['upload_over_parse'])} x parse"],
        ["upload one call per snapshot (the SDK examples' way)",
         f"{num(d['upload_one_by_one_ms'], 0)} ms",
         f"{num(d['upload_one_by_one_ms'] / d['upload_ms'])} x the driver's"],
        ["download (graph and every waypoint snapshot)", f"{num(d['download_ms'], 0)} ms", ""],
        ["load a 100-element Autowalk over the map", f"{num(d['autowalk_load_ms'])} ms", ""],
        ["GetLocalizationState round trip (one `map -> odom` update)",
         f"{num(d['localization_state_ms_median'])} ms median",
         f"{num(d['localization_over_robot_state'], 2)} x GetRobotState"],
    ]
    return table(["step", "time", "as a ratio"], rows) + measured(d)


def mission_load() -> str:
    d = load("mission_load")
    rows = [[f"{row['size_bytes'] / 1e6:.0f} MB",
             f"{num(row['load_chunks2_ms_best'])} / {num(row['load_chunks2_ms_median'])} ms",
             f"{num(row['serialize_ms'], 2)} ms", f"{num(row['parse_ms'], 2)} ms",
             f"{num(row['copy_ms'], 2)} ms",
             f"{row['size_bytes'] / 1e6 / (row['load_chunks2_ms_best'] / 1e3):,.0f} MB/s"]
            for row in d["rows"]]
    return table(["mission", "load (best / median)", "serialize", "parse", "copy",
                  "throughput (best)"], rows) + measured(d)


def perception_e2e() -> str:
    d = load("perception_e2e")
    cpu, floor = d["cpu_percent_of_one_core"], d["bare_publisher_floor"]
    rows = [
        ["delivered, worst sensor topic / worst state topic",
         f"{num(d['min_delivered_percent'])} % / {num(d['min_state_delivered_percent'])} %",
         "≥ 99.5 %"],
        ["image age p50 / p95 / p99",
         f"{num(d['image_age_ms_p50'])} / {num(d['image_age_ms_p95'])} / "
         f"{num(d['image_age_ms_p99'])} ms",
         f"p99 ≤ 15 ms; transport alone p50 {num(floor['image_transport_age_ms_p50'])}, "
         f"p99 {num(floor['image_transport_age_ms_p99'])} ms"],
        ["state age p99", f"{num(d['state_age_ms_p99'])} ms", ""],
        ["the driver's added latency (response received → published), worst stream p99",
         f"{num(d['driver_added_latency']['worst_ms_p99'], 2)} ms",
         f"≤ {num(d['goals']['driver_added_latency_ms_p99_max'], 0)} ms"],
        ["CPU, % of one core: driver / simulated robot / subscriber",
         f"{num(cpu['driver'])} / {num(cpu['sim'])} / {num(cpu['subscriber'])}", ""],
        ["**driver ÷ bare subscriber fed by the replay** "
         f"({num(floor['cpu_percent_of_one_core']['subscriber'])} %)",
         f"**{num(d['driver_to_subscriber_cpu'], 2)}**",
         f"≤ {num(d['goals']['driver_to_subscriber_cpu_max'], 1)}"],
        ["driver ÷ the same subscriber fed by the driver",
         num(d["driver_to_driver_fed_subscriber_cpu"], 2), ""],
        [f"driver ÷ bare publisher of the same bytes "
         f"({num(floor['cpu_percent_of_one_core']['bare_publisher'])} %)",
         num(d["driver_to_bare_publisher_cpu"]), ""],
    ]
    return table(["figure", "this run", "floor / goal"], rows) + measured(d)


def perception_micro() -> str:
    data = load("perception_micro")
    d = data["results"]
    labels = {
        "protobuf_bytes_field_read_640x480": "protobuf `image.data` read (limit)",
        "protobuf_parse_get_image_response_640x480":
            "protobuf parse of a GetImageResponse (limit)",
        "raw_mono8_640x480_bytes_to_image_cdr": "raw mono8 bytes → Image CDR",
        "raw_mono8_640x480_to_image_cdr":
            "raw mono8 Image proto → Image CDR (incl. the protobuf copy)",
        "depth_u16_424x240_to_image_cdr": "depth u16 Image proto → Image CDR",
        "jpeg_passthrough_to_compressed_cdr": "JPEG passthrough → CompressedImage CDR",
        "cloud_100k_xyz_32f_to_pointcloud2_cdr": "100k-point XYZ_32F → PointCloud2 CDR",
        "cloud_100k_xyz_4sc_decode": "100k-point XYZ_4SC decode",
        "cloud_100k_xyz_5sc_decode": "100k-point XYZ_5SC decode",
        "jpeg_decode_to_image_cdr": "JPEG decode 640x480 → Image CDR (simplejpeg)",
        "depth_424x240_to_points": "depth 424x240 → points",
        "depth_424x240_to_pointcloud2_cdr": "depth 424x240 → PointCloud2 CDR",
        "rclpy_message_path_raw_mono8_640x480":
            "rclpy message path for the raw image (build + serialize)",
    }
    rows = [[label, f"{d[key]['input_bytes'] / 1e3:,.0f} KB", num(d[key]["us_per_call"]),
             num(d[key]["x_memcpy"], 2)] for key, label in labels.items() if key in d]
    return table(["conversion", "input", "µs", "x memcpy"], rows) + (
        f"\nThe floor: {data['floor']}, {data['rounds']} rounds.\n" + measured(data))


def driver_scaling() -> str:
    d = load("driver_scaling")
    goals = d["goals"]
    rows = []
    for name, label, key, unit, bar in (
            ("cameras", "cameras", "cameras", "% per MB/s", "knee"),
            ("state_rate", "state Hz", "state_hz", "% per Hz", "knee"),
            ("robots", "robots", "robots", "% per robot", "per_robot")):
        series = d[name]
        points = series["points"]
        costs = series[{"cameras": "driver_cpu_percent_per_megabyte_per_s",
                        "state_rate": "driver_cpu_percent_per_hz",
                        "robots": "driver_cpu_percent_per_added_robot"}[name]]
        if bar == "knee":
            value = series["knee"]
            verdict = (f"knee {num(value, 2)} (≤ {num(goals['knee_max'], 1)})"
                       if value is not None else "knee: too few unsaturated steps")
        else:
            verdict = (f"per robot at 2 ÷ at 1: {num(series['per_robot_cpu_2_over_1'], 2)} "
                       f"(≤ {num(goals['per_robot_cpu_2_over_1_max'], 2)})")
        rows.append([
            f"{label} " + " / ".join(f"{p[key]:g}" + ("*" if p[
                "machine_cpu_percent_of_all_cores"] > goals["saturated_above_percent"] else "")
                for p in points),
            " / ".join(num(p["driver_cpu_percent"]) for p in points),
            " / ".join(num(p["subscriber_cpu_percent"]) for p in points),
            " / ".join(f"{num(p['min_delivered_percent'])} %" for p in points),
            " / ".join(num(c, 3) for c in costs) + f" {unit}", verdict])
    return table(["series", "driver CPU, % of one core", "subscriber", "delivered (worst)",
                  "driver cost per step", "bar"], rows) + (
        f"\n\\* saturated: the simulated robots, drivers and subscriber used over "
        f"{num(goals['saturated_above_percent'], 0)} % of all cores, so the point is reported "
        f"but left out of the knee. Knee: the largest ratio of a later step's cost per unit to "
        f"an earlier step's (1 is linear, below 1 cheaper as load grows).\n" + measured(d))


def _profile_rows(label: str, cpu: float, threads: dict, profile: dict | None) -> list:
    rows = [[label, f"{num(cpu)} % of one core", "by thread: " + ", ".join(
        f"{name} {num(value)} %" for name, value in threads.items())]]
    if profile:
        rows.append(["… Python time by part (py-spy, thread holding the GIL)", "",
                     ", ".join(f"{name} {num(value, 0)} %"
                               for name, value in profile["groups_percent"].items())])
        rows.append(["… top functions", "", ", ".join(
            f"`{name or '(native)'}` {num(value, 0)} %"
            for name, value in list(profile["top_functions_percent"].items())[:6])])
    return rows


def where_time_goes() -> str:
    """Where the driver's CPU goes: per thread and per part, at full perception load and at
    200 Hz state."""
    e2e, scaling = load("perception_e2e"), load("driver_scaling")
    state = scaling["state_rate"]["points"][-1]
    threads = dict(e2e["cpu_percent_of_one_core"]["driver_threads"])
    rows = _profile_rows("full perception load (`perception_e2e.py`)",
                         e2e["cpu_percent_of_one_core"]["driver"], threads,
                         e2e.get("driver_profile"))
    rows += _profile_rows(f"state at {num(state['state_hz'], 0)} Hz, no cameras "
                          f"(`driver_scaling.py`; "
                          f"{num(scaling['state_rate']['driver_us_per_state_cycle'], 0)} µs of "
                          f"CPU per state cycle, the series' slope)",
                          state["driver_cpu_percent"], state["driver_cpu_percent_by_thread"],
                          state.get("driver_profile"))
    return table(["load", "driver CPU", "where"], rows) + (
        "\nThread kinds are kernel names: `python` every Python thread, `event_engine` gRPC's "
        "C core, `dds` Fast DDS; CPU of threads that ended within the window (gRPC starts a "
        "channel thread per call when none is running) counts in the process but not by "
        "thread.\n" + measured(e2e))


def driver_cpu() -> str:
    """The driver's CPU in its default configuration (no subscribers)."""
    d = load("driver_cpu")
    return (f"Driver process (`benchmarks/driver_cpu.py`): with the default configuration (all "
            f"nodes, idle camera publishers, state and every status at "
            f"{num(d['robot_state_rate_hz'], 0)} Hz) the driver used "
            f"**{num(d['driver_cpu_percent_of_one_core'])} % of one core** over "
            f"{num(d['window_s'], 0)} s.\n" + measured(d))


def driver_memory() -> str:
    """The driver's memory under full perception load over time."""
    d = load("driver_memory")
    rows = [
        [f"RSS after {num(d['settle_s'], 0)} s / at {num(d['duration_s'] / 60, 0)} min / peak",
         f"{num(d['rss_mb_after_settle'])} / {num(d['rss_mb_at_end'])} / "
         f"{num(d['rss_mb_peak'])} MB", ""],
        ["USS (memory only the driver holds) at the end", f"{num(d['uss_mb_at_end'])} MB", ""],
        ["growth per hour, RSS / USS (least squares after start-up)",
         f"{num(d['rss_growth_mb_per_hour'])} / {num(d['uss_growth_mb_per_hour'])} MB/h",
         f"≤ {num(d['goals']['growth_mb_per_hour_max'], 0)} MB/h"],
        ["delivered, worst topic", f"{num(d['min_delivered_percent'])} %",
         f"≥ {num(d['goals']['delivered_percent_min'])} %"],
    ]
    return table(["figure", "measured", "bar"], rows) + measured(d)


def goals() -> str:
    """The goals with their figures, from the benchmarks' JSON."""
    cycle, e2e, scaling = load("state_cycle"), load("perception_e2e"), load("driver_scaling")
    templates, low = load("state_templates"), load("low_level")
    walking = load("walking_rates")
    walks = [walking["after"], *walking.get("lower_camera_rates", [])]
    held = [w for w in walks if w["sensor_percent_worst"] >= walking["goals"]["rate_percent_min"]]
    best = max(held, key=lambda w: w["camera_hz"]) if held else walking["after"]
    low_added = low["runs"]["five_cameras_and_lidar"]["perception_added_latency"]
    robots = scaling["robots"]["driver_cpu_percent_per_robot"]
    rows = [
        ["state cycle, RobotState → CDR of 16 messages (`state_cycle.py`)",
         f"protobuf parse {num(cycle['protobuf_parse_us'])} µs",
         f"{num(cycle['full_set_cdr_us'])} µs", f"{num(cycle['full_set_cdr_to_parse'])}x parse",
         "≤ 10x (issue 19; given up in issue 28)"],
        ["driver CPU without / with the wire templates (`state_templates.py`)",
         "the driver with them, same run",
         f"{num(templates['removal_cost_percent_of_driver_cpu'])} % cost", "",
         f"keep above {num(templates['goal_max_removal_cost_percent'], 0)} %"],
        ["driver CPU at full perception load (`perception_e2e.py`)",
         f"bare subscriber fed by the replay "
         f"{num(e2e['bare_publisher_floor']['cpu_percent_of_one_core']['subscriber'])} %",
         f"{num(e2e['cpu_percent_of_one_core']['driver'])} %",
         f"{num(e2e['driver_to_subscriber_cpu'], 2)}x", "≤ 1.5x"],
        ["delivered, worst sensor / state topic", "",
         f"{num(e2e['min_delivered_percent'])} % / {num(e2e['min_state_delivered_percent'])} %",
         "", "≥ 99.5 %"],
        ["image age p99", f"transport p99 "
         f"{num(e2e['bare_publisher_floor']['image_transport_age_ms_p99'])} ms",
         f"{num(e2e['image_age_ms_p99'])} ms", "", "≤ 15 ms"],
        ["driver's added latency p99 at full load with the 333 Hz path on (`low_level.py`)",
         "", f"{num(low_added['worst_ms_p99'], 2)} ms",
         "", f"≤ {num(low['goals']['perception_added_ms_p99_max'], 0)} ms"],
        [f"walking robot, worst camera or lidar topic at {num(walking['camera_hz'], 0)} / "
         f"{num(best['camera_hz'], 0)} Hz cameras (`walking_rates.py`)", "the configured rate",
         f"{num(walking['after']['sensor_percent_worst'])} / "
         f"{num(best['sensor_percent_worst'])} %", "",
         f"≥ {num(walking['goals']['rate_percent_min'], 0)} %"],
        ["driver CPU per robot, 1 / 2 / 4 robots (`driver_scaling.py`)", "",
         " / ".join(num(v) for v in robots) + " %",
         f"{num(scaling['robots']['per_robot_cpu_2_over_1'], 2)} (2 ÷ 1)",
         f"≤ {num(scaling['goals']['per_robot_cpu_2_over_1_max'], 2)}"],
    ]
    return table(["figure", "floor, same run", "measured", "ratio", "goal"], rows)


def operator_link() -> str:
    """The operator across the robot's forward, per link cap, beside the payload's own view."""
    d = load("operator_link")
    goals = d["goals"]
    rows = []
    for run in d["runs"].values():
        op, floor = run["operator"], run["floor_on_payload"]
        cap = "none (veth)" if run["cap_mbit"] is None else f"{run['cap_mbit']} Mbit/s"
        images = run.get("images", True)
        rows.append([
            cap + ("" if images else ", no cameras"),
            f"{num(op['joint_states_hz'])} Hz (gap {num(op['joint_states_max_gap_ms'], 0)} ms)"
            f" / {num(floor['joint_states_hz'])} Hz",
            f"{num(op['trigger_ms_p99'])} / {num(floor['trigger_ms_p99'])} ms",
            f"{num(op['estop_ms_max'])} / {num(floor['estop_ms_max'])} ms",
            f"{num(op['cmd_vel_ms_p50'], 0)} / {num(floor['cmd_vel_ms_p50'], 0)} ms",
            f"{num(op['cmd_vel_ms_p99'], 0)} / {num(floor['cmd_vel_ms_p99'], 0)} ms",
            (f"{num(op['compressed_fps_total'])} + {num(op['raw_fps'])} / "
             f"{num(floor['compressed_fps_total'])} + {num(floor['raw_fps'])}") if images
            else "none",
            str(sum(op["dropped_for_slow_readers"].values())) if images else "-",
            f"{num(op['discovery_s'], 2)} s",
        ])
    header = ["link to the operator", "joint_states (operator / payload)",
              "Trigger p99 (op / payload)", "e-stop service max", "cmd_vel step p50",
              "cmd_vel step p99", "images/s: 5 compressed + 1 raw (op / payload)",
              "frames held back", "discovery"]
    pinned = d.get("pinned")
    return table(header, rows) + (
        f"\nGoals: joint_states >= {goals['joint_states_hz_min']} Hz at every cap; "
        f"cmd_vel step p99 < {goals['cmd_vel_ms_p99_max']} ms at every cap with the cameras "
        f"streaming; Trigger p99 < {goals['trigger_ms_p99']} ms; e-stop service < "
        f"{goals['estop_ms_max']} ms; discovery < {goals['discovery_s_max']} s. Each probe ran "
        f"{d['seconds_per_run']} s with {d['calls']} calls and {d['cmd_vel_steps']} cmd_vel "
        f"steps; images through `image_bandwidth` = {d['image_bandwidth_mbit']} Mbit/s. "
        f"Everything (simulated robot, driver, operator) on one machine"
        + (f", the simulated robot pinned to core {pinned['simulated_robot_cpu']} and the "
           f"payload's processes and both probes to core {pinned['payload_and_probes_cpu']} "
           f"(a robot renders its cameras on its own computers)" if pinned else
           ", nothing pinned (the simulated robot renders its cameras in worker processes "
           "of its own, on CPU nothing else wants)")
        + ".\n" + measured(d))


STAGE_NAMES = {
    "driver_callback": "driver's cmd_vel callback",
    "command_sent": "RobotCommand sent",
    "sim_command_received": "robot: command received",
    "sim_command_accepted": "robot: command accepted",
    "command_answered": "driver: answer received",
    "sim_state_read": "robot: state read showing the change",
    "state_received": "driver: that state received",
    "odometry_published": "driver: odometry published",
    "operator_received": "operator: odometry received",
}


def operator_link_stages() -> str:
    """Where a cmd_vel step's time goes, per stage: time since the operator's publish, p50 and
    p99, across the link and on the payload, with and without the cameras."""
    d = load("operator_link")
    runs = [(name, run) for name, run in d["runs"].items()
            if name in ("uncapped", "10mbit", "uncapped_no_images")]
    header = ["stage"]
    for name, _ in runs:
        label = name.replace("uncapped_no_images", "no cameras").replace("uncapped", "veth") \
            .replace("10mbit", "10 Mbit/s")
        header += [f"{label}: operator", f"{label}: payload"]
    rows = []
    for stage, title in STAGE_NAMES.items():
        row = [title]
        for _, run in runs:
            for side in ("operator", "floor_on_payload"):
                cell = run[side]["cmd_vel_stages"].get(stage, {})
                p50, p99 = cell.get("since_step_ms_p50"), cell.get("since_step_ms_p99")
                row.append("-" if p50 is None else f"{num(p50, 0)} / {num(p99, 0)}")
        rows.append(row)
    return table(header, rows) + (
        "\nEach cell: ms from the operator's first publish of a new speed to the stage, p50 / "
        f"p99 over {d['cmd_vel_steps']} steps (`benchmarks/_stages.py` joins the stamps the "
        "driver and the simulated robot wrote with `SPOT_STAGE_STAMPS`). Payload: the same "
        "probe on the payload itself (no link).\n" + measured(d))


def rosbag_record() -> str:
    """`ros2 bag record -s mcap -a` of a walking and a standing robot: per recording, the rates
    published, the worst topic's share kept, the recorder's own drops and what it costs beside
    the driver."""
    d = load("rosbag_record")

    def rates(run: dict, member) -> str:
        hz = [v["published_hz"] for t, v in run["topics"].items() if member(t)]
        return f"{num(min(hz))}-{num(max(hz))}"

    rows = []
    for run in d["runs"]:
        cpu = run["cpu_percent_of_one_core"]
        cache = "1 GiB" if "max-cache-size" in run["options"] else "default (100 MiB)"
        rows.append([
            f"{run['robot']}, cameras {num(run.get('camera_hz', d['camera_hz']))} Hz, "
            f"cache {cache}",
            rates(run, lambda t: not any(k in t for k in ("/camera/", "/depth/", "/lidar/"))),
            rates(run, lambda t: t.startswith(("/camera/", "/depth/"))),
            rates(run, lambda t: t == "/lidar/points"),
            f"{num(run['kept_percent_worst'], 2)} %",
            str(sum(v["lost_in_cache"] for v in run["topics"].values())),
            f"{num(cpu['recorder'])} %", f"{num(cpu['driver'])} %",
            f"{num(cpu['simulated_robot'])} %", num(run["bag_mb"] / 1000, 2)])
    return table(["recording", "state topics (Hz)", "camera and depth topics (Hz)",
                  "lidar (Hz)", "kept, worst topic", "dropped by the recorder's cache",
                  "recorder CPU", "driver CPU", "robot CPU", "bag (GB)"], rows) + (
        f"\n{num(d['seconds'], 0)} s each ({d['storage']}; {len(d['runs'][0]['topics'])} "
        f"topics compared). Goal: at least {num(d['goal_kept_percent_min'])} % of every "
        f"topic. Configured: cameras {num(d['camera_hz'])} Hz, lidar {num(d['lidar_hz'])} Hz, "
        f"state {num(d['state_hz'])} Hz; CPU in % of one core; compared by header stamp over "
        "the recording less its first and last 2 s.\n" + measured(d))


def walking_rates() -> str:
    """A walking robot's camera, lidar and state rates, before and after the render pool and
    at lower camera rates; CPU per delivered image by process; cmd_vel steps meanwhile."""
    d = load("walking_rates")
    runs = [("before", d["before"])] if "before" in d else []
    runs += [("after", d["after"])] + [("after", r) for r in d.get("lower_camera_rates", [])]
    rows = []
    for label, run in runs:
        cpu, per = run["cpu_percent_of_one_core"], run.get("cpu_ms_per_image", {})
        topics = run["topics"]
        cameras = [v["percent"] for t, v in topics.items() if t.startswith(("/camera/",
                                                                              "/depth/"))]
        steps = run.get("cmd_vel_steps")
        rows.append([
            f"{label}" + (f" ({run['commit']})" if "commit" in run else "")
            + f", cameras {num(run.get('camera_hz', d['camera_hz']))} Hz",
            f"{num(min(cameras))} %", f"{num(topics['/lidar/points']['percent'])} %",
            num(run["state_hz"]), num(run["images_delivered_per_s"]),
            num(run["robot_cpu_ms_per_image"]),
            " / ".join(num(per[k]) for k in ("robot_serving", "robot_renderers", "driver",
                                             "subscriber")) if per else "-",
            f"{num(sum(v for v in cpu.values() if isinstance(v, float)), 0)} %",
            f"{num(steps['p99_ms'])} ms" if steps else "-"])
    held = [r for r in [d["after"], *d.get("lower_camera_rates", [])]
            if r["sensor_percent_worst"] >= d["goals"]["rate_percent_min"]]
    best = (f"The highest camera rate held at >= {num(d['goals']['rate_percent_min'], 0)} % "
            f"while walking: {num(max(r['camera_hz'] for r in held))} Hz. "
            if held else "No camera rate measured was held. ")
    return table(["run", "cameras, worst topic", "lidar", "state (Hz)", "images/s",
                  "robot CPU ms per image", "CPU ms per image: serving / renderers / driver "
                  "/ subscriber", "CPU, all (of one core)", "cmd_vel step p99"], rows) + (
        f"\n{num(d['window_s'], 0)} s windows of a robot walking a circle, rates by header "
        f"stamp; configured lidar {num(d['lidar_hz'])} Hz, state {num(d['state_hz'])} Hz. "
        f"Goals: every camera and lidar topic >= {num(d['goals']['rate_percent_min'], 0)} % "
        f"of its rate, state >= {num(d['goals']['state_hz_min'], 0)} Hz, cmd_vel step p99 < "
        f"{num(d['goals']['cmd_vel_step_p99_ms_max'], 0)} ms. {best}Nothing pinned; the "
        "machine's cores are shared by the robot, its renderers, the driver and the "
        "subscriber.\n" + measured(d))


def nav2_goal() -> str:
    """Nav2's goals behind a box and back: time and path as ratios to the straight line at
    Nav2's top speed, and what the Nav2 processes cost beside the driver."""
    d = load("nav2_goal")
    rows = [[str(i + 1), "yes" if g["succeeded"] else "no", num(g["straight_m"], 2),
             num(g["walked_m"], 2), num(g["seconds"]), num(g["time_vs_floor"], 2),
             num(g["path_vs_line"], 2)] for i, g in enumerate(d["goals"])]
    cpu = d["cpu_percent_of_one_core"]
    return table(["goal", "succeeded", "straight line (m)", "walked (m)", "time (s)",
                  "time / floor", "path / line"], rows) + (
        f"\nFloor: the straight line at Nav2's top speed ({num(d['top_speed_mps'])} m/s). "
        f"Median time / floor {num(d['time_vs_floor_median'], 2)}, path / line "
        f"{num(d['path_vs_line_median'], 2)}. Bring-up to active: {num(d['bring_up_s'])} s. "
        f"CPU while the goals ran ({num(d['window_s'], 0)} s, % of one core): Nav2 "
        f"({d['nav2_processes']} process{'es' if d['nav2_processes'] != 1 else ''}) "
        f"{num(cpu['nav2'])} %, the driver "
        f"{num(cpu['driver'])} %, the simulated robot {num(cpu['simulated_robot'])} %; Nav2 "
        f"costs {num(d['nav2_vs_driver_cpu'], 2)}x the driver.\n" + measured(d))


def moveit_goals() -> str:
    """MoveIt's hand goals: planning against one IK query, execution against the planned
    trajectory's own duration, and where the robot's own hand ended."""
    d = load("moveit_goals")
    rows = [[str(i + 1), "({:.2f}, {:.2f}, {:.2f})".format(*g["goal_m"]),
             "yes" if g["succeeded"] else "no", num(1000 * g["planning_s"], 0),
             num(g["planning_vs_ik"]), num(g["execution_s"], 2), num(g["trajectory_s"], 2),
             num(g["execution_vs_trajectory"], 2), num(g["hand_error_mm"]),
             num(g["hand_angle_deg"], 2)] for i, g in enumerate(d["goals"])]
    return table(["goal", "hand at (m, body)", "succeeded", "planning (ms)", "planning / IK",
                  "execution (s)", "trajectory (s)", "execution / trajectory",
                  "hand error (mm)", "hand angle (°)"], rows) + (
        f"\nSucceeded {d['succeeded']} of {d['attempted']}. Medians: planning "
        f"{num(d['planning_vs_ik_median'])}x one IK query, execution "
        f"{num(d['execution_vs_trajectory_median'], 2)}x the trajectory's own duration, the "
        f"hand {num(d['hand_error_mm_median'])} mm from its goal (at most "
        f"{num(d['hand_error_mm_max'])} mm). move_group up in {num(d['bring_up_s'])} s.\n"
        + measured(d))


def payload_ports() -> str:
    """The ports a payload listens on (from the port plan the launch checks, not a benchmark)."""
    sys.path.insert(0, str(ROOT / "spot_driver"))  # the spot_driver package's folder
    from spot_driver.network import ports

    rows = []
    for mode in ports.MODES[1:]:
        plan = ports.plan(mode, "192.168.80.3", 0)
        for what, port, proto in plan.table(4):
            rows.append([f"`{mode}`", what, port, proto])
    return table(["mode", "what", "port", "protocol"], rows) + (
        f"\nProcesses 0-3 are the launch's driver, robot_state_publisher, RViz and "
        f"`spot_low_level` (with `low_level:=true`); other "
        f"payload participants take Fast DDS's well-known ports from portBase "
        f"{ports.PORT_BASE} (rmw's unique-flow readers {ports.UNIQUE_FLOW_OFFSET} below it); "
        f"domain 0 shown.\n")


def low_level() -> str:
    """Joint-level Spot through the driver, beside the bare SDK stream, per load."""
    d = load("low_level")
    goals = d["goals"]
    rows, held = [], []
    for key, run in d["runs"].items():
        rate, gap, floor = run["rate_hz"], run["max_gap_ms"], run["floor_bare_sdk_stream"]
        camera_hz = run.get("camera_hz") or d["camera_hz"]
        if key != "no_sensors" and min(rate.values()) >= goals["rate_percent_min_with_cameras"] \
                * d["command_hz"] / 100 and max(gap.values()) < goals["gap_ms_max_with_cameras"]:
            held.append(camera_hz)
        rows.append([
            "no camera or lidar subscribed" if key == "no_sensors"
            else f"5 cameras at {num(camera_hz)} Hz + lidar streaming",
            f"{num(rate['/low_level/joint_states'])} / {num(rate['/imu'])} Hz "
            f"(bare SDK {num(floor['rate_hz'])})",
            f"{num(gap['/low_level/joint_states'])} / {num(gap['/imu'])} ms "
            f"(bare {num(floor['max_gap_ms'])})",
            f"{num(run['publish_ms_p50'], 2)} / {num(run['publish_ms_p99'], 2)} ms",
            f"{num(run['round_trip_ms_p50'], 1)} / {num(run['round_trip_ms_p99'], 1)} ms "
            f"(bare {num(floor['round_trip_ms_p50'], 1)} / {num(floor['round_trip_ms_p99'], 1)})",
            f"{num(run['low_level_cpu_percent'])} % (bare {num(floor['cpu_percent_of_one_core'])})",
            (f"{num(added['worst_ms_p99'], 2)} ms" if (added := run["perception_added_latency"])
             else "no sensors"),
            f"{num(sum(run['cpu_percent_of_one_core'].values()), 0)} %",
        ])
    header = ["load", "joint_states / imu rate", "largest gap", "stream → published p50 / p99",
              "command key round trip p50 / p99", "CPU of the low-level process",
              "perception added latency, worst p99", "CPU, all (of one core)"]
    best = (f"The fastest cameras held beside it: {num(max(held))} Hz. " if held
            else "No camera rate measured held it. ")
    return table(header, rows) + (
        f"\nGoals (issue 26), with all five cameras and the lidar: ≥ {goals['rate_hz_min']} Hz, "
        f"no gap > {goals['gap_ms_max']} ms, stream → published p50 < "
        f"{goals['publish_ms_p50_max']} ms and p99 < {goals['publish_ms_p99_max']} ms, round "
        f"trip p99 < {goals['round_trip_ms_p99_max']} ms, CPU < {goals['cpu_percent_max']} % "
        f"of a core; with the 333 Hz path on, the perception streams' own added latency "
        f"(response received → published) p99 ≤ {num(goals['perception_added_ms_p99_max'], 0)} "
        f"ms (issue 31). Issue 65: with the cameras and lidar on, ≥ "
        f"{num(goals['rate_percent_min_with_cameras'], 0)} % of {num(d['command_hz'], 0)} Hz "
        f"and gaps < {num(goals['gap_ms_max_with_cameras'], 0)} ms. {best}"
        f"{num(d['window_s'], 0)} s windows; "
        f"commands at {num(d['command_hz'], 0)} Hz; the simulated robot, driver, low-level "
        f"process and subscriber all on this machine.\n" + measured(d))


def state_cycle() -> str:
    d = load("state_cycle")
    t = load("state_templates")
    rows = [
        ["full set, 16 messages, RobotState → CDR", f"{num(d['full_set_cdr_us'])} µs",
         f"{num(d['full_set_cdr_to_parse'])} x parse ({num(d['protobuf_parse_us'])} µs)"],
        ["… joint_states + odometry + /tf / the 13 statuses",
         f"{num(d['part_kinematics_us'])} / {num(d['part_statuses_us'])} µs", ""],
        ["… only reading those values through protobuf (no conversion)",
         f"{num(d['read_floor_us'])} µs", f"{num(d['read_floor_to_parse'])} x parse"],
        ["… the same set through rclpy messages", f"{num(d['full_set_message_path_us'], 0)} µs",
         f"{num(d['full_set_message_path_to_parse'], 0)} x parse"],
        ["… publishing the 16 serialized messages", f"{num(d['publish_cycle_bytes_us'])} µs",
         f"{num(d['publish_to_parse'])} x parse"],
        ["driver CPU, 50 Hz state + 5 cameras: without / with the wire templates",
         " / ".join(num(v) for v in t["driver_cpu_percent_without_templates"]) + " % / "
         + " / ".join(num(v) for v in t["driver_cpu_percent_with_templates"]) + " %",
         f"removal cost {num(t['removal_cost_percent_of_driver_cpu'])} % "
         f"(kept only above {num(t['goal_max_removal_cost_percent'], 0)} %)"],
    ]
    i = load("state_cycle_interleaved")
    ref, us, frames = i["reference"][:7], i["median_full_set_cdr_us"], i["frames_in_tree"]
    rows.append([f"full set against {ref}, interleaved ({i['rounds']} rounds): this tree / "
                 f"this driver on {ref}'s states",
                 f"{num(us['this_tree'])} / {num(us['driver_on_reference_states'])} µs "
                 f"({ref}: {num(us['reference'])} µs)",
                 f"{num(i['this_tree_to_reference'], 2)} / "
                 f"{num(i['driver_on_reference_states_to_reference'], 2)} x {ref}"])
    return table(["figure", "measured", "ratio"], rows) + (
        f"\nInterleaved (`state_cycle_interleaved.py`): {ref}'s simulated state has "
        f"{frames['reference']} frames ({i['robot_state_bytes']['reference']} bytes), this "
        f"tree's {frames['this_tree']} ({i['robot_state_bytes']['this_tree']} bytes).\n"
        + measured(d))


def wifi_rates() -> str:
    """Delivered / configured per stream and link, beside one-at-a-time bare SDK requests."""
    d = load("wifi_rates")
    kinds = list(d["rates_hz"])
    rows = []
    for name, run in d["runs"].items():
        driver, bare = run["summary_percent"], run["bare_sdk_one_at_a_time_percent"]
        rows.append([name] + [f"{num(driver[k])} % (bare {num(bare[k])} %)" for k in kinds])
    header = ["link"] + [f"{k} ({num(d['rates_hz'][k], 0)} Hz)" for k in kinds]
    return table(header, rows) + (
        f"\nGoal (issue 44): ≥ {num(d['goal_percent_field'], 0)} % of every configured rate "
        f"under the field profile. {num(d['window_s'], 0)} s windows after "
        f"{num(d['warmup_s'], 0)} s of warm-up; the bare client {num(d['bare_window_s'], 0)} s "
        f"per stream; the simulated robot, driver and subscriber all on this machine.\n"
        + measured(d))


RENDER: dict[str, Callable[[], str]] = {
    "low_level": low_level,
    "graph_nav_upload": graph_nav_upload, "mission_load": mission_load,
    "perception_e2e": perception_e2e, "perception_micro": perception_micro,
    "driver_scaling": driver_scaling, "driver_memory": driver_memory,
    "driver_cpu": driver_cpu, "where_time_goes": where_time_goes,
    "state_cycle": state_cycle, "goals": goals,
    "payload_ports": payload_ports, "operator_link": operator_link,
    "operator_link_stages": operator_link_stages, "rosbag_record": rosbag_record,
    "wifi_rates": wifi_rates, "nav2_goal": nav2_goal, "moveit_goals": moveit_goals,
    "walking_rates": walking_rates,
}


def render(text: str) -> str:
    """``text`` with every figures block rendered."""
    def fill(match: re.Match) -> str:
        return match.group(1) + RENDER[match.group(2)]() + match.group(4)
    return BLOCK.sub(fill, text)


SCREENSHOTS = ROOT / ".work" / "figures"  # where tests write the screenshots they judged
IMAGES = ROOT / "doc" / "images"
SHOTS = ("rviz_spot.png", "rviz_moveit.png")  # test_description_rviz_e2e.py: arm run, MoveIt


def copy_screenshots() -> list[str]:
    """The screenshots a test run wrote (``.work/figures``) into doc/images, as written: a
    picture in the docs is one a test took and judged, never one placed by hand."""
    copied = []
    for name in SHOTS:
        if (SCREENSHOTS / name).exists():
            IMAGES.mkdir(exist_ok=True)
            (IMAGES / name).write_bytes((SCREENSHOTS / name).read_bytes())
            copied.append(name)
    return copied


def main(argv: list[str]) -> int:
    if "--check" not in argv:
        copy_screenshots()
    stale = []
    for page in PAGES:
        text = page.read_text()
        rendered = render(text)
        if rendered == text:
            continue
        stale.append(page.relative_to(ROOT))
        if "--check" not in argv:
            page.write_text(rendered)
    if stale and "--check" in argv:
        print(f"figures are stale in {', '.join(map(str, stale))}: run scripts/render_figures.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
