"""Mission state as ROS messages (pure functions)."""

from bosdyn.api.mission import mission_pb2, util_pb2

from spot_msgs.msg import MissionQuestion, MissionStatus


def node_names(info: mission_pb2.MissionInfo | None) -> dict[int, str]:
    """Node id -> name over a mission's NodeInfo tree."""
    names: dict[int, str] = {}
    stack = [info.root] if info is not None else []
    while stack:
        node = stack.pop()
        names[node.id] = node.name
        stack.extend(node.children)
    return names


def running_nodes(state: mission_pb2.State, names: dict[int, str]) -> list[str]:
    """Names of the nodes that were RUNNING at the newest tick in ``state.history``."""
    if not state.history:
        return []
    newest = max(state.history, key=lambda tick: tick.tick_counter)
    return [names.get(node.id, str(node.id)) for node in newest.node_states
            if node.result == util_pb2.RESULT_RUNNING]


def question(q: mission_pb2.Question) -> MissionQuestion:
    return MissionQuestion(id=q.id, source=q.source, text=q.text,
                           option_texts=[o.text for o in q.options],
                           option_codes=[o.answer_code for o in q.options])


def status_name(status: int) -> str:
    return mission_pb2.State.Status.Name(status)


def mission_status(state: mission_pb2.State, names: dict[int, str], stamp) -> MissionStatus:
    msg = MissionStatus(status=state.status, status_name=status_name(state.status),
                        mission_id=state.mission_id, tick_counter=state.tick_counter,
                        error=state.error, running_nodes=running_nodes(state, names),
                        questions=[question(q) for q in state.questions])
    msg.header.stamp = stamp
    return msg
