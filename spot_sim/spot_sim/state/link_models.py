"""The robot's skeleton as the robot-state service reports it: links with OBJ models made of
boxes sized like Spot's links (body, legs, and the arm and gripper when present)."""

from bosdyn.api import robot_state_pb2

from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as arm_kinematics

_LEGS = {"fl": "front_left", "fr": "front_right", "hl": "rear_left", "hr": "rear_right"}
# link -> box size (x, y, z) in m, centred on the link origin unless an offset is given
_BODY = {"body": ((0.85, 0.24, 0.18), (0.0, 0.0, 0.0))}
_LEG_BOXES = {
    "hip": ((0.10, 0.08, 0.08), (0.0, 0.0, 0.0)),
    "upper_leg": ((0.06, 0.05, -kinematics.KNEE[2]),
                  (kinematics.KNEE[0] / 2, 0.0, kinematics.KNEE[2] / 2)),
    "lower_leg": ((0.04, 0.04, kinematics.LOWER_LEG), (0.0, 0.0, -kinematics.LOWER_LEG / 2)),
}
_ARM_BOXES = {
    "arm0.link_sh0": ((0.10, 0.10, 0.10), (0.0, 0.0, 0.0)),
    "arm0.link_sh1": ((0.06, 0.06, 0.06), (0.0, 0.0, 0.0)),
    "arm0.link_el0": ((0.34, 0.06, 0.06), (0.17, 0.0, 0.0)),
    "arm0.link_el1": ((0.06, 0.06, 0.06), (0.0, 0.0, 0.0)),
    "arm0.link_wr0": ((0.30, 0.05, 0.05), (0.15, 0.0, 0.0)),
    "arm0.link_wr1": ((0.10, 0.06, 0.06), (0.05, 0.0, 0.0)),
    "arm0.link_fngr": ((0.10, 0.04, 0.02), (0.05, 0.0, 0.0)),
}


def link_boxes(has_arm: bool) -> dict[str, tuple[tuple, tuple]]:
    """Every link's (size, centre offset), in the robot's link names."""
    boxes = dict(_BODY)
    for long in _LEGS.values():
        for part, box in _LEG_BOXES.items():
            boxes[f"{long}_{part}"] = box
    if has_arm:
        assert set(arm_kinematics.LINKS) <= set(_ARM_BOXES)
        boxes.update(_ARM_BOXES)
    return boxes


def box_obj(name: str, size: tuple, offset: tuple) -> str:
    """A Wavefront OBJ of one box: 8 vertices, 6 quad faces, one object named ``name``."""
    half = [s / 2 for s in size]
    lines = [f"# {name}: box {size[0]:.3f} x {size[1]:.3f} x {size[2]:.3f} m", f"o {name}"]
    for i in range(8):
        x = offset[0] + (half[0] if i & 1 else -half[0])
        y = offset[1] + (half[1] if i & 2 else -half[1])
        z = offset[2] + (half[2] if i & 4 else -half[2])
        lines.append(f"v {x:.5f} {y:.5f} {z:.5f}")
    for face in ((1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3),
                 (2, 4, 8, 6)):
        lines.append("f " + " ".join(str(v) for v in face))
    return "\n".join(lines) + "\n"


def skeleton(has_arm: bool) -> robot_state_pb2.Skeleton:
    out = robot_state_pb2.Skeleton()
    for name, (size, offset) in link_boxes(has_arm).items():
        link = out.links.add(name=name)
        link.obj_model.file_name = f"{name}.obj"
        link.obj_model.file_contents = box_obj(name, size, offset)
    return out
