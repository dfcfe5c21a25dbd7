"""GraphNav maps on disk, in the layout the SDK and Autowalk use:

    <directory>/graph                       a serialized bosdyn.api.graph_nav.Graph
    <directory>/waypoint_snapshots/<id>     one serialized WaypointSnapshot per waypoint
    <directory>/edge_snapshots/<id>         one serialized EdgeSnapshot per edge

Reading checks the whole map before anything is sent to the robot: a missing or unreadable
graph, an edge naming an unknown waypoint, or a snapshot the graph names but the directory
lacks (or cannot parse) is a MapFileError naming the file.
"""

from dataclasses import dataclass, field
from pathlib import Path

from bosdyn.api.graph_nav import map_pb2
from google.protobuf.message import DecodeError

from spot_driver.core.errors import CommandError

MAX_GRAPH_BYTES = 256 * 1024 * 1024


class MapFileError(CommandError):
    """A map directory that cannot be used; the message names the file and the problem."""


@dataclass
class MapFiles:
    graph: map_pb2.Graph
    waypoint_snapshots: dict[str, map_pb2.WaypointSnapshot] = field(default_factory=dict)
    edge_snapshots: dict[str, map_pb2.EdgeSnapshot] = field(default_factory=dict)


def _file_name(snapshot_id: str) -> str:
    """A snapshot id as a file name; ids that would leave the map directory are refused."""
    if not snapshot_id or "/" in snapshot_id or "\\" in snapshot_id or \
            snapshot_id in (".", ".."):
        raise MapFileError(f"snapshot id {snapshot_id!r} cannot be a file name")
    return snapshot_id


def _parse(path: Path, message_type):
    try:
        return message_type.FromString(path.read_bytes())
    except DecodeError:
        raise MapFileError(f"{str(path)!r} is not a {message_type.DESCRIPTOR.name}") from None
    except OSError as exc:
        raise MapFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None


def read_map(directory: str) -> MapFiles:
    """The graph and every snapshot it names, checked."""
    if not directory:
        raise MapFileError("no map directory given")
    root = Path(directory).expanduser()
    graph = _read_graph(root)
    out = MapFiles(graph)
    for kind, items, store, message_type in (
            ("waypoint_snapshots", graph.waypoints, out.waypoint_snapshots,
             map_pb2.WaypointSnapshot),
            ("edge_snapshots", graph.edges, out.edge_snapshots, map_pb2.EdgeSnapshot)):
        for item in items:
            if not item.snapshot_id:
                continue
            path = root / kind / _file_name(item.snapshot_id)
            if not path.is_file():
                raise MapFileError(f"snapshot {str(path)!r} named by the graph is missing")
            store[item.snapshot_id] = _parse(path, message_type)
    return out


def _read_graph(root: Path) -> map_pb2.Graph:
    """The ``graph`` file of map directory ``root``: present, not too large, with waypoints
    and edges only between them."""
    graph_file = root / "graph"
    try:
        if not root.is_dir():
            raise MapFileError(f"map directory {str(root)!r} not found")
        if not graph_file.is_file():
            raise MapFileError(f"{str(root)!r} has no 'graph' file: not a GraphNav map "
                               "directory")
        size = graph_file.stat().st_size
    except OSError as exc:  # a name too long, a folder the driver may not enter
        raise MapFileError(f"cannot use map directory {str(root)[:200]!r}: {exc.strerror}"
                           ) from None
    if size > MAX_GRAPH_BYTES:
        raise MapFileError(f"{str(graph_file)!r} is larger than {MAX_GRAPH_BYTES} bytes")
    graph = _parse(graph_file, map_pb2.Graph)
    if not graph.waypoints:
        raise MapFileError(f"{str(graph_file)!r} holds no waypoints")
    ids = {w.id for w in graph.waypoints}
    for edge in graph.edges:
        for end in (edge.id.from_waypoint, edge.id.to_waypoint):
            if end not in ids:
                raise MapFileError(f"{str(graph_file)!r}: an edge names unknown waypoint "
                                   f"{end!r}")
    return graph


def write_map(directory: str, files: MapFiles) -> None:
    """Write a map in the SDK layout (creating the directories)."""
    root = Path(directory).expanduser()
    for kind in ("waypoint_snapshots", "edge_snapshots"):
        (root / kind).mkdir(parents=True, exist_ok=True)
    (root / "graph").write_bytes(files.graph.SerializeToString())
    for snapshot_id, snapshot in files.waypoint_snapshots.items():
        (root / "waypoint_snapshots" / _file_name(snapshot_id)).write_bytes(
            snapshot.SerializeToString())
    for snapshot_id, snapshot in files.edge_snapshots.items():
        (root / "edge_snapshots" / _file_name(snapshot_id)).write_bytes(
            snapshot.SerializeToString())
