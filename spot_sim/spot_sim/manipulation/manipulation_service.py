"""manipulation-api: pick or walk to an object seen in a camera image, at a point, or along a
ray in the world; grasp overrides. (pick_object_execute_plan is refused: unsupported.)"""

import math

import numpy as np
from bosdyn.api import (
    header_pb2,
    manipulation_api_pb2,
    manipulation_api_service_pb2_grpc,
    robot_state_pb2,
)
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import LEASE, set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.manipulation.api_tasks import PICK_STANDOFF, WALK_OFFSET, ManipulationTasks
from spot_sim.perception.scene import NOTHING, Scene

_INVALID = header_pb2.CommonError.CODE_INVALID_REQUEST
MAX_RAY_M = 6.0
Carry = robot_state_pb2.ManipulatorState


class ManipulationServicer(manipulation_api_service_pb2_grpc.ManipulationApiServiceServicer):
    def __init__(self, robot: SimRobot, scene: Scene) -> None:
        self.robot, self.clock, self.scene = robot, robot.clock, scene
        self.tasks = ManipulationTasks(robot)

    @unary(manipulation_api_pb2.ManipulationApiResponse, LEASE)
    def ManipulationApi(self, request, response, context):
        robot = self.robot
        if not robot.license.allows("arm"):
            set_error(response, _INVALID, robot.license.refusal("arm"))
            return
        which = request.WhichOneof("manipulation_cmd")
        if which not in _TARGETS:
            set_error(response, _INVALID, f"manipulation command {which!r} is not supported")
            return
        body = getattr(request, which)
        try:
            target = _TARGETS[which](self, body)
        except ValueError as exc:
            set_error(response, _INVALID, str(exc))
            return
        pick = which.startswith("pick")
        if pick:
            standoff = PICK_STANDOFF
        else:
            standoff = body.offset_distance.value if body.HasField("offset_distance") \
                else WALK_OFFSET
        try:
            response.manipulation_cmd_id = self.tasks.start(pick, target, standoff)
        except ValueError as refused:
            set_error(response, _INVALID, str(refused))

    def _in_odom(self, frame: str) -> np.ndarray:
        """odom_T_frame (4x4) for a frame on the robot's tree (ValueError otherwise)."""
        snapshot = self.robot.transforms_snapshot()
        if frame not in snapshot.child_to_parent_edge_map:
            raise ValueError(f"unknown frame {frame!r}")
        return get_a_tform_b(snapshot, "odom", frame).to_matrix()

    def _point_target(self, body) -> np.ndarray:
        """pick_object: a point given in a frame of the robot's tree."""
        p = body.object_rt_frame
        if not all(math.isfinite(v) for v in (p.x, p.y, p.z)):
            raise ValueError("object_rt_frame must be finite")
        return (self._in_odom(body.frame_name) @ np.array([p.x, p.y, p.z, 1.0]))[:3]

    def _ray_target(self, body) -> np.ndarray | None:
        """The ray from ray_start_rt_frame towards ray_end_rt_frame cast into the scene, no
        further than its end (None: no hit)."""
        a, b = body.ray_start_rt_frame, body.ray_end_rt_frame
        values = (a.x, a.y, a.z, b.x, b.y, b.z)
        if not all(math.isfinite(v) for v in values):
            raise ValueError("the ray must be finite")
        odom_t_frame = self._in_odom(body.frame_name)
        start = (odom_t_frame @ np.array([a.x, a.y, a.z, 1.0]))[:3]
        end = (odom_t_frame @ np.array([b.x, b.y, b.z, 1.0]))[:3]
        length = float(np.linalg.norm(end - start))
        if length < 1e-6:
            raise ValueError("the ray's start and end are the same point")
        direction = (end - start) / length
        t, surface = self.scene.raycast(start, direction[None], min(length, MAX_RAY_M))
        if surface[0] == NOTHING:
            return None
        return start + direction * float(t[0])

    def _target(self, body) -> np.ndarray | None:
        """The object's position in odom: the pixel's ray cast into the scene (None: no hit)."""
        model = body.camera_model
        fx, fy = model.intrinsics.focal_length.x, model.intrinsics.focal_length.y
        cx, cy = model.intrinsics.principal_point.x, model.intrinsics.principal_point.y
        u, v = body.pixel_xy.x, body.pixel_xy.y
        if not all(math.isfinite(x) for x in (fx, fy, cx, cy, u, v)) or fx <= 0 or fy <= 0:
            raise ValueError("camera model and pixel must be finite with positive focal lengths")
        if u < 0 or v < 0 or u > 2 * cx + 1 or v > 2 * cy + 1:
            raise ValueError(f"pixel ({u}, {v}) is outside the image")
        frame = body.frame_name_image_sensor
        if frame not in body.transforms_snapshot_for_camera.child_to_parent_edge_map:
            raise ValueError(f"frame {frame!r} is not in transforms_snapshot_for_camera")
        odom_t_sensor = get_a_tform_b(body.transforms_snapshot_for_camera, "odom", frame)
        if odom_t_sensor is None:
            raise ValueError(f"frame {frame!r} is not connected to odom")
        matrix = odom_t_sensor.to_matrix()
        direction = matrix[:3, :3] @ np.array([(u - cx) / fx, (v - cy) / fy, 1.0])
        origin = matrix[:3, 3]
        t, surface = self.scene.raycast(origin, direction[None], MAX_RAY_M)
        if surface[0] == NOTHING:
            return None
        return origin + direction * float(t[0])

    @unary(manipulation_api_pb2.ManipulationApiFeedbackResponse)
    def ManipulationApiFeedback(self, request, response, context):
        state = self.tasks.state(request.manipulation_cmd_id)
        if state is None:
            set_error(response, _INVALID,
                      f"unknown manipulation command id {request.manipulation_cmd_id}")
            return
        response.manipulation_cmd_id = request.manipulation_cmd_id
        response.current_state = state
        response.transforms_snapshot_manipulation_data.CopyFrom(self.robot.transforms_snapshot())

    @unary(manipulation_api_pb2.ApiGraspOverrideResponse)
    def OverrideGrasp(self, request, response, context):
        if not self.robot.config.has_arm:
            set_error(response, _INVALID, "this robot has no arm")
            return
        holding = carry_state = None
        if request.HasField("api_grasp_override"):
            override = request.api_grasp_override.override_request
            if override == manipulation_api_pb2.ApiGraspOverride.OVERRIDE_HOLDING:
                holding = True
            elif override == manipulation_api_pb2.ApiGraspOverride.OVERRIDE_NOT_HOLDING:
                holding = False
        if request.HasField("carry_state_override"):
            carry_state = request.carry_state_override.override_request
            if carry_state not in (Carry.CARRY_STATE_NOT_CARRIABLE, Carry.CARRY_STATE_CARRIABLE,
                                   Carry.CARRY_STATE_CARRIABLE_AND_STOWABLE):
                set_error(response, _INVALID, f"unknown carry state {carry_state}")
                return
        self.robot.override_grasp(holding, carry_state)


_TARGETS = {"pick_object_in_image": ManipulationServicer._target,
            "walk_to_object_in_image": ManipulationServicer._target,
            "pick_object": ManipulationServicer._point_target,
            "pick_object_ray_in_world": ManipulationServicer._ray_target,
            "walk_to_object_ray_in_world": ManipulationServicer._ray_target}


def spec() -> ServiceSpec:
    return ServiceSpec("manipulation", "bosdyn.api.ManipulationApiService", "api.spot.robot",
                       manipulation_api_service_pb2_grpc.add_ManipulationApiServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: ManipulationServicer(parts.robot,
                                                               parts.sensors.scene),
                   hardware="arm"),)
