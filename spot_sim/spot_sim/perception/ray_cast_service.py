"""ray-cast: rays from any frame on the robot's tree against the simulated scene (ground plane
only, or the scene's terrain and obstacles)."""

import math

import numpy as np
from bosdyn.api import ray_cast_pb2 as pb
from bosdyn.api import ray_cast_service_pb2_grpc
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.perception.scene import FLOOR, Scene

Hit = pb.RayIntersection


class RayCastServicer(ray_cast_service_pb2_grpc.RayCastServiceServicer):
    def __init__(self, robot: SimRobot, scene: Scene) -> None:
        self.robot, self.clock, self.scene = robot, robot.clock, scene

    @unary(pb.RaycastResponse)
    def Raycast(self, request, response, context):
        kinds = set(request.intersection_types) or {Hit.TYPE_GROUND_PLANE, Hit.TYPE_TERRAIN_MAP,
                                                    Hit.TYPE_VOXEL_MAP}
        if Hit.TYPE_HAND_DEPTH in kinds or Hit.TYPE_UNKNOWN in kinds:
            response.status = response.STATUS_INVALID_INTERSECTION_TYPE
            response.message = "only ground plane, terrain map and voxel map hits are simulated"
            return
        origin = request.ray.origin
        direction = np.array([request.ray.direction.x, request.ray.direction.y,
                              request.ray.direction.z])
        norm = float(np.linalg.norm(direction))
        values = [origin.x, origin.y, origin.z, *direction]
        if not all(math.isfinite(v) for v in values) or norm < 1e-9:
            response.status = response.STATUS_INVALID_REQUEST
            response.message = "the ray needs a finite origin and a non-zero direction"
            return
        snapshot = self.robot.transforms_snapshot()
        frame = request.ray_frame_name or "odom"
        odom_t_frame = get_a_tform_b(snapshot, "odom", frame)
        if odom_t_frame is None:
            response.status = response.STATUS_UNKNOWN_FRAME
            response.message = f"unknown frame {frame!r}"
            return
        m = odom_t_frame.to_matrix()
        o = m[:3, :3] @ np.array([origin.x, origin.y, origin.z]) + m[:3, 3]
        d = m[:3, :3] @ (direction / norm)
        t, surface = self.scene.raycast(o, d[None, :])
        hits = []
        if Hit.TYPE_GROUND_PLANE in kinds and abs(d[2]) > 1e-9 and -o[2] / d[2] > 0:
            hits.append((float(-o[2] / d[2]), Hit.TYPE_GROUND_PLANE))
        if kinds & {Hit.TYPE_TERRAIN_MAP, Hit.TYPE_VOXEL_MAP} and np.isfinite(t[0]):
            hits.append((float(t[0]), Hit.TYPE_TERRAIN_MAP if surface[0] == FLOOR
                         else Hit.TYPE_VOXEL_MAP))
        hits.sort()
        frame_t_odom = np.linalg.inv(m)
        response.status = response.STATUS_OK
        response.hit_frame_name = frame
        response.transforms_snapshot.CopyFrom(snapshot)
        for distance, kind in hits:
            if distance < request.min_intersection_distance:
                continue
            point = frame_t_odom @ np.append(o + distance * d, 1.0)
            hit = response.hits.add(type=kind, distance_meters=distance)
            hit.hit_position_in_hit_frame.x, hit.hit_position_in_hit_frame.y, \
                hit.hit_position_in_hit_frame.z = (float(v) for v in point[:3])


def spec() -> ServiceSpec:
    return ServiceSpec("ray-cast", "bosdyn.api.RayCastService", "api.spot.robot",
                       ray_cast_service_pb2_grpc.add_RayCastServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: RayCastServicer(parts.robot, parts.sensors.scene)),)
