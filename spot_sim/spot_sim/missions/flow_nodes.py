"""Mission nodes that order other nodes: sequences, selectors, switches, repeats,
retries, time limits, parallels, restart-when-paused, and the waiting ones (sleep, prompt).

Each follows the start/tick/halt protocol of ``spot_sim.missions.nodes.Node``.
"""


from bosdyn.api.mission import nodes_pb2

from spot_sim.missions.blackboard import evaluate
from spot_sim.missions.nodes import ERROR, FAILURE, RUNNING, SUCCESS, MissionNodeError, Node


# ----------------------------------------------------------------------- composites
class Sequence(Node):
    """Ticks its children in order while they succeed (a Selector: while they fail)."""

    MOVE_ON = SUCCESS  # the child result that moves to the next child; also the final result

    def __init__(self, node_id, name, parameters, kids, always_restart):
        super().__init__(node_id, name, parameters)
        self.kids, self.always_restart, self.index = kids, always_restart, 0

    def children(self):
        return self.kids

    def start(self, ctx):
        self.index = 0

    def update(self, ctx):
        if self.always_restart:
            self.index = 0
        while self.index < len(self.kids):
            result = self.kids[self.index].tick(ctx)
            if result != self.MOVE_ON:
                if result != RUNNING:
                    self.index = 0
                return result
            self.index += 1
        self.index = 0
        return self.MOVE_ON


class Selector(Sequence):
    MOVE_ON = FAILURE


class Repeat(Node):
    def __init__(self, node_id, name, parameters, child, spec: nodes_pb2.Repeat):
        super().__init__(node_id, name, parameters)
        self.child, self.spec, self.starts, self.scope = child, spec, 0, {}

    def children(self):
        return [self.child]

    def start(self, ctx):
        self.starts = 0

    def update(self, ctx):
        """One start per tick at most, so a huge ``max_starts`` cannot stall the tick."""
        counter = self.spec.start_counter_state_name
        if counter:
            self.scope[counter] = self.starts
        with ctx.blackboard.scope(self.scope):
            result = self.child.tick(ctx)
        if result == RUNNING or result == ERROR:
            return result
        if result == FAILURE and self.spec.respect_child_failure:
            return FAILURE
        self.starts += 1
        done = 0 < self.spec.max_starts <= self.starts
        return SUCCESS if done else RUNNING


class Retry(Node):
    def __init__(self, node_id, name, parameters, child, spec: nodes_pb2.Retry):
        super().__init__(node_id, name, parameters)
        self.child, self.spec, self.attempts, self.scope = child, spec, 0, {}

    def children(self):
        return [self.child]

    def start(self, ctx):
        self.attempts = 0

    def update(self, ctx):
        """One attempt per tick at most."""
        counter = self.spec.attempt_counter_state_name
        if counter:
            self.scope[counter] = self.attempts
        with ctx.blackboard.scope(self.scope):
            result = self.child.tick(ctx)
        if result != FAILURE:
            return result
        self.attempts += 1
        return FAILURE if self.attempts >= self.spec.max_attempts else RUNNING


class ForDuration(Node):
    def __init__(self, node_id, name, parameters, child, timeout_child, spec):
        super().__init__(node_id, name, parameters)
        self.child, self.timeout_child, self.spec = child, timeout_child, spec
        self.start_ns, self.timed_out, self.scope = 0, False, {}

    def children(self):
        return [c for c in (self.child, self.timeout_child) if c is not None]

    def start(self, ctx):
        self.start_ns, self.timed_out = ctx.mission_ns, False

    def _duration_ns(self, ctx) -> int:
        if self.spec.WhichOneof("duration_type") == "duration_name_in_blackboard":
            seconds = ctx.blackboard.read(self.spec.duration_name_in_blackboard)
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise MissionNodeError("ForDuration duration in the blackboard is not a number")
            return int(seconds * 1e9)
        d = self.spec.duration
        return d.seconds * 1_000_000_000 + d.nanos

    def update(self, ctx):
        if not self.timed_out:
            remaining = self._duration_ns(ctx) - (ctx.mission_ns - self.start_ns)
            if self.spec.time_remaining_name:
                self.scope[self.spec.time_remaining_name] = max(remaining, 0) / 1e9
            if remaining > 0:
                with ctx.blackboard.scope(self.scope):
                    return self.child.tick(ctx)
            self.child.halt(ctx)
            self.timed_out = True
        if self.timeout_child is None:
            return FAILURE
        return self.timeout_child.tick(ctx)


class SimpleParallel(Node):
    def __init__(self, node_id, name, parameters, primary, secondary, spec):
        super().__init__(node_id, name, parameters)
        self.primary, self.secondary, self.spec = primary, secondary, spec
        self.secondary_done = False

    def children(self):
        return [self.primary, self.secondary]

    def start(self, ctx):
        self.secondary_done = False

    def _tick_secondary(self, ctx):
        if self.secondary_done:
            return
        result = self.secondary.tick(ctx)
        if result != RUNNING and self.spec.run_secondary_node_once:
            self.secondary_done = True

    def update(self, ctx):
        if self.spec.tick_secondary_node_first:
            self._tick_secondary(ctx)
        result = self.primary.tick(ctx)
        if result != RUNNING:
            self.secondary.halt(ctx)
            return result
        if not self.spec.tick_secondary_node_first:
            self._tick_secondary(ctx)
        return RUNNING


class Sleep(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.Sleep):
        super().__init__(node_id, name, parameters)
        self.spec, self.start_ns, self.elapsed_before_halt = spec, 0, None

    def start(self, ctx):
        if self.elapsed_before_halt is not None and not self.spec.restart_after_stop:
            self.start_ns = ctx.mission_ns - self.elapsed_before_halt  # resume the timer
        else:
            self.start_ns = ctx.mission_ns
        self.elapsed_before_halt = None

    def halt(self, ctx):
        if self.running:
            self.elapsed_before_halt = ctx.mission_ns - self.start_ns
        super().halt(ctx)

    def forget(self):
        self.elapsed_before_halt = None

    def update(self, ctx):
        if self.spec.WhichOneof("duration") == "duration_name_in_blackboard":
            seconds = ctx.blackboard.read(self.spec.duration_name_in_blackboard)
        else:
            seconds = self.spec.seconds
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise MissionNodeError("Sleep duration is not a number")
        return SUCCESS if ctx.mission_ns - self.start_ns >= seconds * 1e9 else RUNNING


class Prompt(Node):
    def __init__(self, node_id, name, parameters, child, spec: nodes_pb2.Prompt):
        super().__init__(node_id, name, parameters)
        self.child, self.spec = child, spec
        self.question_id, self.answer, self.scope = 0, None, {}

    def children(self):
        return [self.child] if self.child is not None else []

    def options(self) -> list[nodes_pb2.Prompt.Option]:
        if self.spec.WhichOneof("answer_spec") == "options_list":
            return list(self.spec.options_list.options)
        return list(self.spec.options)

    def start(self, ctx):
        if self.spec.always_reprompt or self.answer is None:
            self.answer = None
            self.question_id = ctx.ask(self)

    def update(self, ctx):
        if self.answer is None:
            self.answer = ctx.answer_for(self.question_id)
            if self.answer is None:
                return RUNNING
        if self.spec.source:
            self.scope[self.spec.source] = self.answer
        if self.child is None:
            return SUCCESS
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)

    def finish(self, ctx):
        if self.answer is None:
            ctx.withdraw(self.question_id)


# ----------------------------------------------------------------------- composites
class Switch(Node):
    """Runs the child chosen by an integer pivot; a child switched away from restarts."""

    def __init__(self, node_id, name, parameters, cases: dict, default, spec):
        super().__init__(node_id, name, parameters)
        self.cases, self.default, self.spec = cases, default, spec
        self.active = None

    def children(self):
        return [c for c in (*self.cases.values(), self.default) if c is not None]

    def _choose(self, ctx):
        pivot = evaluate(self.spec.pivot_value, ctx.blackboard, self.parameters)
        if isinstance(pivot, bool) or not isinstance(pivot, int):
            raise MissionNodeError(f"switch pivot {pivot!r} is not an integer")
        return self.cases.get(pivot, self.default)

    def start(self, ctx):
        self.active = self._choose(ctx)

    def update(self, ctx):
        if self.spec.always_restart:
            chosen = self._choose(ctx)
            if chosen is not self.active and self.active is not None:
                self.active.halt(ctx)
            self.active = chosen
        if self.active is None:
            raise MissionNodeError("switch: no child for the pivot and no default child")
        return self.active.tick(ctx)


class ParallelAnd(Node):
    """Ticks every child each tick until all have finished (or one fails, unless
    ``finish_every_node``); an error ends it at once."""

    def __init__(self, node_id, name, parameters, kids, finish_every_node: bool):
        super().__init__(node_id, name, parameters)
        self.kids, self.finish_every_node = kids, finish_every_node
        self.results: dict[int, int] = {}

    def children(self):
        return self.kids

    def start(self, ctx):
        self.results = {}

    def update(self, ctx):
        for index, child in enumerate(self.kids):
            if index in self.results:
                continue
            result = child.tick(ctx)
            if result == RUNNING:
                continue
            self.results[index] = result
            if result == ERROR or (result == FAILURE and not self.finish_every_node):
                self._halt_others(ctx)
                return result
        if len(self.results) < len(self.kids):
            return RUNNING
        return FAILURE if FAILURE in self.results.values() else SUCCESS

    def _halt_others(self, ctx):
        for child in self.kids:
            child.halt(ctx)


class RestartWhenPaused(Node):
    """Its child, started afresh when the mission resumes after a pause."""

    def __init__(self, node_id, name, parameters, child):
        super().__init__(node_id, name, parameters)
        self.child = child

    def children(self):
        return [self.child]

    def halt(self, ctx):
        super().halt(ctx)
        self.child.forget()

    def update(self, ctx):
        return self.child.tick(ctx)
