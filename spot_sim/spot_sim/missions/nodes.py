"""The behaviour-tree node protocol of the mission service; the nodes themselves are in
``flow_nodes``, ``blackboard_nodes``, ``robot_nodes`` and ``graph_nav_nodes``.

Each node is ticked by its parent and answers RUNNING, SUCCESS, FAILURE or ERROR. A node that
was not RUNNING on its previous tick starts afresh (``start``); ``halt`` stops a running
node and whatever it commands on the robot (pause, stop, or a parent moving on).

Times are mission execution time (``ctx.mission_ns``), which stands still while the mission
is paused.
"""


from bosdyn.api.mission import util_pb2

from spot_sim.missions.blackboard import BlackboardError

RUNNING, SUCCESS = util_pb2.RESULT_RUNNING, util_pb2.RESULT_SUCCESS
FAILURE, ERROR = util_pb2.RESULT_FAILURE, util_pb2.RESULT_ERROR


class MissionNodeError(Exception):
    """A node cannot run (a robot service refused, a variable is missing): result ERROR."""


class Node:
    """Base of every node: the start/tick/halt protocol and the state history record."""

    def __init__(self, node_id: int, name: str, parameters: dict) -> None:
        self.id, self.name, self.parameters = node_id, name, parameters
        self.running = False
        self.error = ""

    def tick(self, ctx) -> int:
        try:
            if not self.running:
                self.error = ""
                self.start(ctx)
            result = self.update(ctx)
        except (MissionNodeError, BlackboardError) as exc:
            self.error, result = str(exc), ERROR
        self.running = result == RUNNING
        if not self.running:
            self.finish(ctx)
        ctx.record(self, result)
        return result

    def halt(self, ctx) -> None:
        """Stop this node (and its children) mid-run."""
        if self.running:
            self.running = False
            self.finish(ctx)
            for child in self.children():
                child.halt(ctx)

    def children(self) -> list["Node"]:
        return []

    def forget(self) -> None:
        """Drop what a halted run would resume from, here and below (RestartWhenPaused)."""
        for child in self.children():
            if child is not None:
                child.forget()

    def start(self, ctx) -> None:
        """Called on the first tick of a run."""

    def update(self, ctx) -> int:
        raise NotImplementedError

    def finish(self, ctx) -> None:
        """Called when a run ends (result or halt): release what the run holds."""
