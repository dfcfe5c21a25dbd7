"""The simulated robot's GraphNav, recording, map-processing, local-grid and autowalk services
through the unmodified SDK clients (``GraphNavClient``, ``GraphNavRecordingServiceClient``,
``MapProcessingServiceClient``, ``LocalGridClient``, ``AutowalkClient``) and ``bosdyn-mission``.

One robot records a map by walking (trajectory commands, as any client drives it); the tests
then use that map in order: download, clear, upload, localize, navigate, process, autowalk."""

import itertools
import math
import time

import numpy as np
import pytest
from bosdyn.api import data_acquisition_store_pb2, local_grid_pb2
from bosdyn.api.autowalk import walks_pb2
from bosdyn.api.graph_nav import graph_nav_pb2, map_pb2, map_processing_pb2, nav_pb2
from bosdyn.api.mission import mission_pb2
from bosdyn.client.autowalk import AutowalkClient, CompilationError
from bosdyn.client.frame_helpers import ODOM_FRAME_NAME
from bosdyn.client.graph_nav import (
    GraphNavClient,
    InvalidGraphError,
    NoPathError,
    RequestFailedError,
    RobotNotLocalizedToRouteError,
    UnknownMapInformationError,
    UnknownRouteElementsError,
    UnknownWaypointError,
)
from bosdyn.client.lease import LeaseClient, LeaseKeepAlive
from bosdyn.client.local_grid import LocalGridClient
from bosdyn.client.map_processing import MapProcessingServiceClient
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.power import power_on_motors
from bosdyn.client.recording import GraphNavRecordingServiceClient
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_stand
from bosdyn.mission.client import MissionClient
from test_body_sim import commander, odom_tform_body, wait_for

from conftest import connect, part, running_sim
from spot_sim.body.base import Base
from spot_sim.body.legs import Legs

Feedback = graph_nav_pb2.NavigationFeedbackResponse
# Where the recording walk puts waypoints (odom x, y); the first is the map's seed.
PATH = ((0.0, 0.0), (1.5, 0.0), (1.5, 1.8), (0.0, 1.8))


def walk_to(robot, x: float, y: float, yaw: float = 0.0, timeout: float = 20.0) -> None:
    command = RobotCommandBuilder.synchro_se2_trajectory_point_command(x, y, yaw,
                                                                       ODOM_FRAME_NAME)
    client = commander(robot)
    command_id = client.robot_command(command, end_time_secs=time.time() + timeout)

    def settled():  # at the goal, the body settled
        feedback = client.robot_command_feedback(command_id).feedback.synchronized_feedback \
            .mobility_command_feedback.se2_trajectory_feedback
        return feedback.status == feedback.STATUS_AT_GOAL \
            and feedback.body_movement_status == feedback.BODY_STATUS_SETTLED

    assert wait_for(settled, timeout), odom_tform_body(robot)
    pose = odom_tform_body(robot)
    assert math.hypot(pose.x - x, pose.y - y) < 0.05, pose


def clients(robot):
    return (robot.ensure_client(GraphNavClient.default_service_name),
            robot.ensure_client(GraphNavRecordingServiceClient.default_service_name))


def wait_navigation(graph_nav, command_id: int, timeout: float = 40.0):
    done = {}

    def finished():
        done["fb"] = graph_nav.navigation_feedback(command_id)
        return done["fb"].status != Feedback.STATUS_FOLLOWING_ROUTE

    assert wait_for(finished, timeout, period=0.2), done.get("fb")
    return done["fb"]


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    """A powered, standing robot that has recorded ``PATH`` (ids in order)."""
    certs = tmp_path_factory.mktemp("certs")
    with running_sim(certs) as sim:
        robot = connect(sim)
        from test_body_sim import operated
        with operated(robot):
            power_on_motors(robot.ensure_client("power"), timeout_sec=10)
            blocking_stand(commander(robot), timeout_sec=10)
            _, recording = clients(robot)
            started = recording.start_recording_full()
            ids = [started.created_waypoint.id]
            for x, y in PATH[1:]:
                walk_to(robot, x, y)
                ids.append(recording.create_waypoint(waypoint_name=f"at_{x}_{y}")
                           .created_waypoint.id)
            recording.stop_recording()
            yield sim, robot, ids


def test_recording_made_waypoints_edges_and_snapshots(mapped):
    _, robot, ids = mapped
    graph_nav, recording = clients(robot)
    assert not recording.get_record_status().is_recording
    graph = graph_nav.download_graph()
    assert [w.id for w in graph.waypoints] == ids
    assert [(e.id.from_waypoint, e.id.to_waypoint) for e in graph.edges] == \
        list(itertools.pairwise(ids))
    for edge, (a, b) in zip(graph.edges, itertools.pairwise(PATH), strict=True):
        # odometry transform between consecutive waypoints (all recorded facing +x)
        assert edge.from_tform_to.position.x == pytest.approx(b[0] - a[0], abs=0.05)
        assert edge.from_tform_to.position.y == pytest.approx(b[1] - a[1], abs=0.05)
    anchors = {a.id: a.seed_tform_waypoint.position for a in graph.anchoring.anchors}
    assert anchors[ids[2]].x == pytest.approx(1.5, abs=0.05)
    snapshot = graph_nav.download_waypoint_snapshot(graph.waypoints[0].snapshot_id)
    assert snapshot.point_cloud.num_points > 1000
    assert len(snapshot.point_cloud.data) == 12 * snapshot.point_cloud.num_points
    assert 520 in {o.apriltag_properties.tag_id for o in snapshot.objects}
    lean = graph_nav.download_waypoint_snapshot(graph.waypoints[0].snapshot_id,
                                                do_not_download_point_cloud=True)
    assert not lean.HasField("point_cloud")


def test_download_clear_upload_localize_navigate(mapped, tmp_path):
    sim, robot, ids = mapped
    graph_nav, _ = clients(robot)
    directory = tmp_path / "map"
    graph_nav.write_graph_and_snapshots(str(directory))
    assert (directory / "graph").is_file()
    assert len(list((directory / "waypoint_snapshots").iterdir())) == len(ids)
    assert len(list((directory / "edge_snapshots").iterdir())) == len(ids) - 1

    graph_nav.clear_graph()
    assert not graph_nav.download_graph().waypoints
    assert not graph_nav.get_localization_state().localization.waypoint_id

    graph = map_pb2.Graph.FromString((directory / "graph").read_bytes())
    response = graph_nav.upload_graph(graph=graph, generate_new_anchoring=True)
    assert sorted(response.unknown_waypoint_snapshot_ids) == \
        sorted(w.snapshot_id for w in graph.waypoints)
    for snapshot_id in response.unknown_waypoint_snapshot_ids:
        graph_nav.upload_waypoint_snapshot(map_pb2.WaypointSnapshot.FromString(
            (directory / "waypoint_snapshots" / snapshot_id).read_bytes()))
    for snapshot_id in response.unknown_edge_snapshot_ids:
        graph_nav.upload_edge_snapshot(map_pb2.EdgeSnapshot.FromString(
            (directory / "edge_snapshots" / snapshot_id).read_bytes()))

    with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name)):
        with pytest.raises(RobotNotLocalizedToRouteError):
            graph_nav.navigate_to(ids[0], cmd_duration=10.0)
        localization = graph_nav.set_localization(
            initial_guess_localization=nav_pb2.Localization(),
            fiducial_init=graph_nav_pb2.SetLocalizationRequest.FIDUCIAL_INIT_NEAREST)
        assert localization.waypoint_id == ids[-1]  # the robot is still at the last one
        assert localization.seed_tform_body.position.x == pytest.approx(PATH[-1][0], abs=0.05)
        assert localization.seed_tform_body.position.y == pytest.approx(PATH[-1][1], abs=0.05)

        with pytest.raises(UnknownWaypointError):
            graph_nav.navigate_to("no-such-waypoint", cmd_duration=10.0)
        command_id = graph_nav.navigate_to(ids[0], cmd_duration=40.0)
        feedback = wait_navigation(graph_nav, command_id)
        assert feedback.status == Feedback.STATUS_REACHED_GOAL
        pose = odom_tform_body(robot)
        assert math.hypot(pose.x, pose.y) < 0.1
        state = graph_nav.get_localization_state()
        assert state.localization.waypoint_id == ids[0]
        assert state.localization.waypoint_tform_body.position.x == pytest.approx(0, abs=0.1)

        route = graph_nav.build_route(ids[:3], [map_pb2.Edge.Id(from_waypoint=a, to_waypoint=b)
                                                for a, b in itertools.pairwise(ids[:3])])
        command_id = graph_nav.navigate_route(route, cmd_duration=40.0)
        feedback = wait_navigation(graph_nav, command_id)
        assert feedback.status == Feedback.STATUS_REACHED_GOAL
        assert list(feedback.completed_route.waypoint_ids) == ids[:3]
        at = graph_nav.get_localization_state().localization
        assert at.waypoint_id == ids[2]
        offset = at.waypoint_tform_body.position
        assert math.hypot(offset.x, offset.y) < 0.05  # at the waypoint, as localized
        pose = odom_tform_body(robot)  # truth: off by the vision drift since the fix
        assert math.hypot(pose.x - PATH[2][0], pose.y - PATH[2][1]) < 0.25

        with pytest.raises(UnknownRouteElementsError):
            graph_nav.navigate_route(graph_nav.build_route(["nope"], []), cmd_duration=5.0)

        # Cancel mid-route: any other mobility command overrides navigation.
        command_id = graph_nav.navigate_to(ids[0], cmd_duration=40.0)
        assert wait_for(lambda: graph_nav.navigation_feedback(command_id)
                        .remaining_route_length < 2.0, 20)
        commander(robot).robot_command(RobotCommandBuilder.stop_command())
        feedback = wait_navigation(graph_nav, command_id, 5.0)
        assert feedback.status == Feedback.STATUS_COMMAND_OVERRIDDEN
        assert wait_for(lambda: sim.robot.velocity().x == 0.0, 2.0)


def test_a_route_reissued_as_new_commands_continues_from_where_the_robot_is(mapped):
    """The SDK's GraphNav command-line pattern: navigate_route with cmd_duration=1.0 sent
    again every 0.5 s, each call a new command, feedback polled until REACHED_GOAL; along the
    recorded chain from the last waypoint back to the first (every edge walked backwards)."""
    _sim, robot, ids = mapped
    graph_nav, _ = clients(robot)
    with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name)):
        graph_nav.set_localization(
            initial_guess_localization=nav_pb2.Localization(),
            fiducial_init=graph_nav_pb2.SetLocalizationRequest.FIDUCIAL_INIT_NEAREST)
        command_id = graph_nav.navigate_to(ids[-1], cmd_duration=40.0)
        assert wait_navigation(graph_nav, command_id).status == Feedback.STATUS_REACHED_GOAL
        backwards = list(reversed(ids))
        route = graph_nav.build_route(backwards, [
            map_pb2.Edge.Id(from_waypoint=a, to_waypoint=b)
            for a, b in itertools.pairwise(backwards)])
        deadline = time.monotonic() + 60.0
        status = None
        while time.monotonic() < deadline:
            command_id = graph_nav.navigate_route(route, cmd_duration=1.0)
            time.sleep(0.5)
            status = graph_nav.navigation_feedback(command_id).status
            if status == Feedback.STATUS_REACHED_GOAL:
                break
        assert status == Feedback.STATUS_REACHED_GOAL
        assert graph_nav.get_localization_state().localization.waypoint_id == ids[0]


def test_initial_guess_localization_is_refined_or_refused(mapped):
    _, robot, _ = mapped
    graph_nav, _ = clients(robot)
    here = graph_nav.get_localization_state().localization
    guess = nav_pb2.Localization(waypoint_id=here.waypoint_id)
    guess.waypoint_tform_body.CopyFrom(here.waypoint_tform_body)
    guess.waypoint_tform_body.position.x += 0.2  # a rough guess is refined
    no_fiducial = graph_nav_pb2.SetLocalizationRequest.FIDUCIAL_INIT_NO_FIDUCIAL
    fixed = graph_nav.set_localization(initial_guess_localization=guess, max_distance=0.5,
                                       fiducial_init=no_fiducial)
    # refined to where the robot really is relative to the waypoint
    (waypoint,) = [w for w in graph_nav.download_graph().waypoints if w.id == here.waypoint_id]
    truth = SE3Pose.from_proto(waypoint.waypoint_tform_ko) * odom_tform_body(robot)
    assert fixed.waypoint_tform_body.position.x == pytest.approx(truth.x, abs=0.01)
    assert fixed.waypoint_tform_body.position.y == pytest.approx(truth.y, abs=0.01)
    guess.waypoint_tform_body.position.x += 3.0  # far off: the scan does not match
    with pytest.raises(RequestFailedError):
        graph_nav.set_localization(initial_guess_localization=guess, max_distance=0.5,
                                   fiducial_init=no_fiducial)
    guess.waypoint_id = "unknown"
    with pytest.raises(UnknownMapInformationError):
        graph_nav.set_localization(initial_guess_localization=guess,
                                   fiducial_init=no_fiducial)


def test_map_processing_closes_the_loop_by_fiducial_and_anchors(mapped):
    _, robot, ids = mapped
    client = robot.ensure_client(MapProcessingServiceClient.default_service_name)
    params = map_processing_pb2.ProcessTopologyRequest.Params()
    params.do_fiducial_loop_closure.value = True
    params.do_odometry_loop_closure.value = False
    response = client.process_topology(params, modify_map_on_server=False)
    closures = {(e.id.from_waypoint, e.id.to_waypoint): e for e in response.new_subgraph.edges}
    # Waypoints 0, 1 and 3 all see dock 520's fiducial; 0-3 and 1-3 were not joined.
    assert set(closures) == {(ids[0], ids[3]), (ids[1], ids[3])}
    edge = closures[(ids[0], ids[3])]
    assert edge.from_tform_to.position.x == pytest.approx(PATH[3][0], abs=0.05)
    assert edge.from_tform_to.position.y == pytest.approx(PATH[3][1], abs=0.05)
    assert edge.annotations.edge_source == map_pb2.Edge.EDGE_SOURCE_FIDUCIAL_LOOP_CLOSURE
    anchoring = client.process_anchoring(
        map_processing_pb2.ProcessAnchoringRequest.Params(), modify_anchoring_on_server=False,
        stream_intermediate_results=False)
    assert {a.id for a in anchoring.waypoint_results} == set(ids)
    (tag,) = anchoring.world_object_results
    assert tag.id == "520"
    # the fiducial sits on the dock's back plate: 0.45 m behind the dock at (-2, -1.5)
    assert tag.seed_tform_object.position.x == pytest.approx(-2.45, abs=0.05)


def decode_grid(grid: local_grid_pb2.LocalGrid) -> np.ndarray:
    dtype = {local_grid_pb2.LocalGrid.CELL_FORMAT_INT16: "<i2",
             local_grid_pb2.LocalGrid.CELL_FORMAT_UINT8: "u1"}[grid.cell_format]
    values = np.frombuffer(grid.data, dtype=dtype)
    if grid.encoding == local_grid_pb2.LocalGrid.ENCODING_RLE:
        values = np.repeat(values, grid.rle_counts)
    scale = grid.cell_value_scale or 1.0
    return (values * scale + grid.cell_value_offset).reshape(
        grid.extent.num_cells_y, grid.extent.num_cells_x)


def test_local_grids_around_the_robot(mapped):
    _, robot, _ = mapped
    client = robot.ensure_client(LocalGridClient.default_service_name)
    offered = {t.name for t in client.get_local_grid_types()}
    assert offered >= {"terrain", "no_step", "obstacle_distance", "intensity"}
    walk_to(robot, 1.5, 0.0)  # the red box (2.2..2.8, 0.4..1.0, 0.8 m tall) is in range
    responses = client.get_local_grids(["terrain", "no_step", "obstacle_distance", "nosuch"])
    grids = {r.local_grid_type_name: r for r in responses}
    assert grids["nosuch"].status == local_grid_pb2.LocalGridResponse.STATUS_NO_SUCH_GRID
    terrain = grids["terrain"].local_grid
    from bosdyn.client.frame_helpers import get_a_tform_b
    corner = get_a_tform_b(terrain.transforms_snapshot, ODOM_FRAME_NAME,
                           terrain.frame_name_local_grid_data)
    size = terrain.extent.cell_size

    def cell(x, y):
        return int((y - corner.y) / size), int((x - corner.x) / size)

    heights = decode_grid(terrain)
    assert heights[cell(2.5, 0.7)] == pytest.approx(0.8, abs=1e-3)
    assert heights[cell(1.0, 0.0)] == pytest.approx(0.0, abs=1e-3)
    distance = decode_grid(grids["obstacle_distance"].local_grid)
    assert distance[cell(2.5, 0.7)] < 0  # inside the box
    assert distance[cell(1.7, 0.7)] == pytest.approx(0.5, abs=0.05)  # 0.5 m from its face
    no_step = grids["no_step"].local_grid
    assert no_step.encoding == local_grid_pb2.LocalGrid.ENCODING_RLE
    assert decode_grid(no_step)[cell(2.5, 0.7)] <= 0


def test_autowalk_compiles_to_a_mission_that_walks_the_map(mapped):
    sim, robot, ids = mapped
    graph_nav, _ = clients(robot)
    walk = walks_pb2.Walk(mission_name="inspection")
    for index, waypoint_id in enumerate((ids[2], ids[0])):
        element = walk.elements.add(name=f"stop {index}")
        element.target.navigate_to.destination_waypoint_id = waypoint_id
        element.action.sleep.duration.FromNanoseconds(300_000_000)
    capture = walk.elements[1].action.data_acquisition  # the second stop captures its state
    capture.acquire_data_request.acquisition_requests.data_captures.add(name="robot-state")
    autowalk = robot.ensure_client(AutowalkClient.default_service_name)
    mission = robot.ensure_client(MissionClient.default_service_name)
    bad = walks_pb2.Walk()
    bad.CopyFrom(walk)
    bad.elements[1].action.remote_grpc.SetInParent()
    lease_client = robot.ensure_client(LeaseClient.default_service_name)
    with LeaseKeepAlive(lease_client):
        with pytest.raises(CompilationError) as refused:
            autowalk.load_autowalk(bad, leases=[robot.lease_wallet.get_lease()])
        assert "remote" in str(refused.value.response.failed_elements[1].errors)
        loaded = autowalk.load_autowalk(walk, leases=[robot.lease_wallet.get_lease()])
        assert len(loaded.element_identifiers) == 2
        assert loaded.element_identifiers[0].navigation_id.node_id > 0
        mission.play_mission(time.time() + 60, leases=[robot.lease_wallet.get_lease()])
        assert wait_for(lambda: mission.get_state().status in (
            mission_pb2.State.STATUS_SUCCESS, mission_pb2.State.STATUS_FAILURE,
            mission_pb2.State.STATUS_ERROR), 60, 0.2), mission.get_state()
        assert mission.get_state().status == mission_pb2.State.STATUS_SUCCESS, \
            mission.get_state()
    assert graph_nav.get_localization_state().localization.waypoint_id == ids[0]
    stored = [r.data_id for r in sim.captures.query(
        data_acquisition_store_pb2.QueryParameters(include_data=True))]
    assert [(d.action_id.group_name, d.action_id.action_name, d.channel) for d in stored] == [
        ("inspection", "stop 1", "robot-state")]


def test_autowalk_body_pose_wrappers_pose_the_body_for_the_action(mapped):
    """The tablet records a body pose on inspection points (action_wrapper.robot_body_pose):
    the robot holds it while the action runs, then stands neutral. Wrappers the simulator
    does not model are refused naming the wrapper."""
    sim, robot, ids = mapped
    walk = walks_pb2.Walk(mission_name="look down")
    element = walk.elements.add(name="inspect")
    element.target.navigate_to.destination_waypoint_id = ids[0]
    element.action.sleep.duration.FromNanoseconds(1_500_000_000)
    pose = element.action_wrapper.robot_body_pose.target_tform_body
    pose.position.z = -0.1
    pose.rotation.CopyFrom(Quat.from_pitch(0.3).to_proto())
    autowalk = robot.ensure_client(AutowalkClient.default_service_name)
    mission = robot.ensure_client(MissionClient.default_service_name)
    unsupported = walks_pb2.Walk()
    unsupported.CopyFrom(walk)
    unsupported.elements[0].action_wrapper.spot_cam_ptz.SetInParent()
    with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name)):
        with pytest.raises(CompilationError) as refused:
            autowalk.load_autowalk(unsupported, leases=[robot.lease_wallet.get_lease()])
        assert "spot_cam_ptz" in str(refused.value.response.failed_elements[0].errors)
        loaded = autowalk.load_autowalk(walk, leases=[robot.lease_wallet.get_lease()])
        assert loaded.element_identifiers[0].action_id.node_id > 0  # the sleep itself
        mission.play_mission(time.time() + 60, leases=[robot.lease_wallet.get_lease()])
        assert wait_for(lambda: part(sim.robot, Base).rotation.to_pitch() == pytest.approx(
            0.3, abs=0.01), 30, 0.05), "the body pose was not applied"
        assert part(sim.robot, Legs).height_offset == pytest.approx(-0.1, abs=0.01)
        assert wait_for(lambda: mission.get_state().status in (
            mission_pb2.State.STATUS_SUCCESS, mission_pb2.State.STATUS_FAILURE,
            mission_pb2.State.STATUS_ERROR), 30, 0.2), mission.get_state()
        assert mission.get_state().status == mission_pb2.State.STATUS_SUCCESS, \
            mission.get_state()
        assert part(sim.robot, Legs).height_offset == 0.0  # a neutral stand after the action
        assert abs(part(sim.robot, Base).rotation.to_pitch()) < 1e-6


def test_bad_uploads_are_refused_and_change_nothing(mapped):
    _, robot, _ = mapped
    graph_nav, _ = clients(robot)
    before = graph_nav.download_graph()
    broken = map_pb2.Graph()
    broken.waypoints.add(id="a")
    edge = broken.edges.add()
    edge.id.from_waypoint, edge.id.to_waypoint = "a", "missing"
    with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name)):
        with pytest.raises(InvalidGraphError) as refused:
            graph_nav.upload_graph(graph=broken)
    assert "missing" in refused.value.response.header.error.message
    assert graph_nav.download_graph().SerializeToString() == before.SerializeToString()


def _nogo_box(x: float, y: float, size_x: float, size_y: float):
    from bosdyn.api import world_object_pb2

    obj = world_object_pb2.WorldObject(name="nogo")
    box = obj.nogo_region_properties.box
    box.frame_name = ODOM_FRAME_NAME
    box.box.size.x, box.box.size.y = size_x, size_y
    box.frame_name_tform_box.CopyFrom(SE3Pose(x, y, 0.0, Quat()).to_proto())
    return obj


def test_navigation_plans_around_user_nogo_regions(mapped):
    """With the loop closed by the fiducial (waypoint 3 joined to 0 and 1), the way from 0 to
    3 is their 1.8 m edge. A no-go region beside that edge sends the robot round by waypoint
    1 (whatever way it turns as it walks, its footprint keeps clear); one around waypoint 0
    leaves no path to it (STATUS_NO_PATH)."""
    from bosdyn.client.world_object import WorldObjectClient

    _, robot, ids = mapped
    graph_nav, _ = clients(robot)
    processing = robot.ensure_client(MapProcessingServiceClient.default_service_name)
    params = map_processing_pb2.ProcessTopologyRequest.Params()
    params.do_fiducial_loop_closure.value = True
    params.do_odometry_loop_closure.value = False
    objects = robot.ensure_client(WorldObjectClient.default_service_name)
    added = []
    with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name)):
        processing.process_topology(params, modify_map_on_server=True)
        graph_nav.set_localization(
            initial_guess_localization=nav_pb2.Localization(),
            fiducial_init=graph_nav_pb2.SetLocalizationRequest.FIDUCIAL_INIT_NEAREST)
        command_id = graph_nav.navigate_to(ids[0], cmd_duration=40.0)
        assert wait_navigation(graph_nav, command_id).status == Feedback.STATUS_REACHED_GOAL
        try:
            added.append(objects.mutate_world_objects(_mutation(_nogo_box(-0.2, 0.9, 0.6, 0.3)))
                         .mutated_object_id)
            command_id = graph_nav.navigate_to(ids[3], cmd_duration=60.0)
            farthest = 0.0
            deadline = time.monotonic() + 60.0
            while time.monotonic() < deadline:
                farthest = max(farthest, odom_tform_body(robot).x)
                status = graph_nav.navigation_feedback(command_id).status
                if status != Feedback.STATUS_FOLLOWING_ROUTE:
                    break
                time.sleep(0.2)
            assert status == Feedback.STATUS_REACHED_GOAL
            assert farthest > 1.2  # by waypoint 1 at (1.5, 0), not the blocked 0-3 edge
            added.append(objects.mutate_world_objects(_mutation(_nogo_box(0.0, 0.0, 0.6, 0.6)))
                         .mutated_object_id)
            with pytest.raises(NoPathError):
                graph_nav.navigate_to(ids[0], cmd_duration=10.0)
        finally:
            for object_id in added:
                objects.mutate_world_objects(_mutation(None, object_id))


def _mutation(obj, delete_id: int = 0):
    from bosdyn.api import world_object_pb2

    Request = world_object_pb2.MutateWorldObjectRequest
    if obj is None:
        return Request(mutation=Request.Mutation(
            action=Request.ACTION_DELETE, object=world_object_pb2.WorldObject(id=delete_id)))
    return Request(mutation=Request.Mutation(action=Request.ACTION_ADD, object=obj))
