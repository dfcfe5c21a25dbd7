"""Regenerate the <disable_collisions> entries of spot_description/srdf/spot.srdf from the URDF, as
MoveIt's setup assistant does (adjacent links, pairs always or never in collision over random
joint states): see collision_matrix.py beside this script.

    .venv/bin/python scripts/srdf_collisions.py    # after scripts/env.sh; rewrites the SRDF
"""

from pathlib import Path

from collision_matrix import CollisionModel, disabled_pairs

from spot_driver.description.robot_model import robot_description

SRDF = Path(__file__).resolve().parent.parent / "spot_description" / "srdf" / "spot.srdf"
SAMPLES, SEED = 2000, 0  # what test/test_description_moveit_units.py regenerates and compares


def entries() -> list[str]:
    reasons = disabled_pairs(CollisionModel.from_urdf(robot_description(True)), SAMPLES, SEED)
    return [f'  <disable_collisions link1="{a}" link2="{b}" reason="{reason}"/>'
            for (a, b), reason in sorted(reasons.items())]


def main() -> None:
    text = SRDF.read_text()
    kept = [line for line in text.splitlines() if "<disable_collisions" not in line]
    end = next(i for i, line in enumerate(kept) if line.strip() == "</robot>")
    SRDF.write_text("\n".join([*kept[:end], *entries(), *kept[end:]]) + "\n")
    print(f"{SRDF}: {len(entries())} disabled pairs")


if __name__ == "__main__":
    main()
