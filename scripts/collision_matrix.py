"""The SRDF's allowed-collision matrix, computed as MoveIt's setup assistant does: link pairs
that are adjacent in the model, always in collision, or never in collision over many random
joint states get ``<disable_collisions>``; the others stay checked.

Collision shapes are the URDF's (boxes, spheres), checked with coal. ``srdf_collisions.py``
beside this file writes the result into ``spot_description/srdf/spot.srdf``. A development tool: the
installed driver never imports it (coal and yourdfpy are not its dependencies).
"""

import io
import itertools
from dataclasses import dataclass

import coal
import numpy as np
import yourdfpy

NEVER, ALWAYS, ADJACENT = "Never", "Always", "Adjacent"


@dataclass
class CollisionModel:
    """The model's collision shapes, posed by joint values."""

    urdf: yourdfpy.URDF
    shapes: dict[str, list[tuple[object, np.ndarray]]]  # link -> [(coal geometry, link_T_shape)]

    @classmethod
    def from_urdf(cls, text: str) -> "CollisionModel":
        urdf = yourdfpy.URDF.load(io.BytesIO(text.encode()), load_meshes=False,
                                  build_collision_scene_graph=False)
        shapes: dict[str, list] = {}
        for name, link in urdf.link_map.items():
            for collision in link.collisions:
                geometry = collision.geometry
                if geometry.box is not None:
                    shape = coal.Box(*geometry.box.size)
                elif geometry.sphere is not None:
                    shape = coal.Sphere(geometry.sphere.radius)
                else:
                    continue
                origin = collision.origin if collision.origin is not None else np.eye(4)
                shapes.setdefault(name, []).append((shape, origin))
        return cls(urdf, shapes)

    def random_state(self, rng: np.random.Generator) -> dict[str, float]:
        return {name: rng.uniform(joint.limit.lower, joint.limit.upper)
                for name, joint in self.urdf.joint_map.items()
                if name in self.urdf.actuated_joint_names}

    def colliding_pairs(self, state: dict[str, float],
                        pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of ``pairs`` (link names) are in collision at ``state``."""
        self.urdf.update_cfg(state)
        objects = {}
        for link, shapes in self.shapes.items():
            pose = self.urdf.get_transform(link, self.urdf.base_link)
            objects[link] = [coal.CollisionObject(shape, _transform(pose @ origin))
                             for shape, origin in shapes]
        found = set()
        request, result = coal.CollisionRequest(), coal.CollisionResult()
        for a, b in pairs:
            for first in objects.get(a, ()):
                for second in objects.get(b, ()):
                    result.clear()
                    if coal.collide(first, second, request, result):
                        found.add((a, b))
                        break
                if (a, b) in found:
                    break
        return found

    def adjacent_pairs(self) -> set[tuple[str, str]]:
        """Links joined by a joint, fixed joints merged into their parent (as MoveIt does)."""
        parent = {joint.child: joint.parent for joint in self.urdf.joint_map.values()}
        fixed = {joint.child for joint in self.urdf.joint_map.values() if joint.type == "fixed"}

        def body_of(link: str) -> str:
            while link in fixed:
                link = parent[link]
            return link

        adjacent = set()
        for child, par in parent.items():
            a, b = body_of(par), body_of(child)
            for x in {a, par}:
                for y in {b, child}:
                    if x != y:
                        adjacent.add(tuple(sorted((x, y))))
        for a, b in itertools.combinations(sorted(self.shapes | {k: [] for k in parent}), 2):
            if body_of(a) == body_of(b):
                adjacent.add((a, b))
        return adjacent


def _transform(matrix: np.ndarray) -> "coal.Transform3s":
    return coal.Transform3s(matrix[:3, :3], matrix[:3, 3])


def disabled_pairs(model: CollisionModel, samples: int = 2000, seed: int = 0,
                   always_fraction: float = 0.95) -> dict[tuple[str, str], str]:
    """(link, link) -> reason for every pair MoveIt need not check."""
    links = sorted(model.urdf.link_map)
    adjacent = model.adjacent_pairs()
    reasons = {pair: ADJACENT for pair in adjacent}
    pairs = [pair for pair in itertools.combinations(links, 2) if pair not in adjacent
             and pair[0] in model.shapes and pair[1] in model.shapes]
    counts = dict.fromkeys(pairs, 0)
    rng = np.random.default_rng(seed)
    for _ in range(samples):
        for pair in model.colliding_pairs(model.random_state(rng), pairs):
            counts[pair] += 1
    for pair, count in counts.items():
        if count == 0:
            reasons[pair] = NEVER
        elif count >= always_fraction * samples:
            reasons[pair] = ALWAYS
    for a, b in itertools.combinations(links, 2):  # links without shapes never collide
        if (a, b) not in reasons and (a not in model.shapes or b not in model.shapes):
            reasons[(a, b)] = NEVER
    return reasons


def checked_pairs(model: CollisionModel,
                  disabled: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs MoveIt checks: every pair of links with shapes, minus the disabled ones."""
    return [pair for pair in itertools.combinations(sorted(model.shapes), 2)
            if pair not in disabled and pair[::-1] not in disabled]
