"""The state cycle of this tree against an earlier commit's, measured interleaved.

This machine's speed drifts by tens of percent over minutes, so a claim against an older
commit ("the full set is back to f042440's") holds only when both run in alternation on one
machine. Each round runs ``benchmarks/state_cycle.py`` three times, each in its own process:

- **reference**: the reference commit's benchmark, driver and simulator (a temporary git
  worktree);
- **driver on the reference's states**: this tree's driver under the reference's benchmark
  and simulator, so the inputs are the same and only the driver's code differs;
- **this tree**: this tree's benchmark, driver and simulator. Its simulated states may carry
  more than the reference's (a bigger frame tree), and its pipeline may make more messages.

The ratios are medians of per-round ratios to the reference's full set. The default
reference is f042440, the commit before round 4 (issue 54's item 7).
Writes benchmarks/results/state_cycle_interleaved.json.

    python benchmarks/state_cycle_interleaved.py [--against COMMIT] [--rounds N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _results

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "f042440"
ROUNDS = 8
CONFIGS = ("reference", "driver_on_reference_states", "this_tree")


def import_paths(tree: Path) -> list[Path]:
    """Where a tree's Python packages import from: its sibling package folders, or its root
    (before issue 54 the root was the spot_driver package and held spot_sim)."""
    if (tree / "spot_driver" / "spot_driver").is_dir():
        return [tree / "spot_driver", tree / "spot_sim"]
    return [tree]


def run_once(tree: Path, paths: list[Path]) -> dict:
    """``tree``'s state-cycle benchmark, importing from ``paths`` first; its JSON."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, "benchmarks/state_cycle.py"], cwd=tree, env=env,
                   check=True, stdout=subprocess.DEVNULL)
    return json.loads((tree / "benchmarks/results/state_cycle.json").read_text())


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default=REFERENCE, help="the reference commit")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    try:
        reference = git("rev-parse", "--verify", f"{args.against}^{{commit}}")
    except subprocess.CalledProcessError:
        sys.exit(f"state_cycle_interleaved: no commit {args.against!r} in this repository "
                 "(a shallow clone lacks the history: git fetch --unshallow)")
    saved = (ROOT / "benchmarks/results/state_cycle.json").read_bytes()
    runs: dict[str, list[dict]] = {config: [] for config in CONFIGS}
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "reference"
        git("worktree", "add", "--detach", str(worktree), reference)
        try:
            trees = {"reference": (worktree, import_paths(worktree)),
                     "driver_on_reference_states": (
                         worktree, [ROOT / "spot_driver", *import_paths(worktree)]),
                     "this_tree": (ROOT, import_paths(ROOT))}
            for _ in range(args.rounds):
                for config, (tree, paths) in trees.items():
                    runs[config].append(run_once(tree, paths))
        finally:
            git("worktree", "remove", "--force", str(worktree))
            # this tree's runs wrote its state_cycle.json: keep the figure state_cycle.py made
            (ROOT / "benchmarks/results/state_cycle.json").write_bytes(saved)

    def full_sets(config: str) -> list[float]:
        return [run["full_set_cdr_us"] for run in runs[config]]

    def ratio(config: str) -> float:
        return round(statistics.median(
            a / b for a, b in zip(full_sets(config), full_sets("reference"), strict=True)), 3)

    first = {config: runs[config][0] for config in CONFIGS}
    results = {
        "reference": reference,
        "this_tree": git("rev-parse", "HEAD"),
        "this_tree_modified": bool(git("status", "--porcelain", "--untracked-files=no")),
        "rounds": args.rounds,
        "full_set_cdr_us": {config: full_sets(config) for config in CONFIGS},
        "median_full_set_cdr_us": {config: round(statistics.median(full_sets(config)), 2)
                                   for config in CONFIGS},
        "this_tree_to_reference": ratio("this_tree"),
        "driver_on_reference_states_to_reference": ratio("driver_on_reference_states"),
        "frames_in_tree": {config: first[config]["frames_in_tree"] for config in CONFIGS},
        "robot_state_bytes": {config: first[config]["robot_state_bytes"] for config in CONFIGS},
    }
    _results.write("state_cycle_interleaved", results)
    return results


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
