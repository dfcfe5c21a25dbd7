"""follower.follow and the action servers' goal slots, without ROS or a robot: tasks here are
plain scripted RobotTasks (the e2e suites drive the real ones through the simulator)."""

import threading
import time

import pytest

from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Outcome, Progress, RobotTask, follow
from spot_driver.nodes.actions import GoalPolicy, GoalSlot


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Scripted(RobotTask):
    """Reports ``progress`` one after the other (the last one repeats)."""

    name = "scripted"
    poll_s = 0.1

    def __init__(self, progress: list[Progress], timeout: float = 60.0,
                 refuse: Exception | None = None, fail_at: int | None = None) -> None:
        self._progress, self.timeout = progress, timeout
        self._refuse, self._fail_at = refuse, fail_at
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")
        if self._refuse is not None:
            raise self._refuse

    def poll(self) -> Progress:
        polls = self.calls.count("poll")
        self.calls.append("poll")
        if self._fail_at is not None and polls == self._fail_at:
            raise CommandError("the robot went away")
        return self._progress[min(polls, len(self._progress) - 1)]

    def renew(self) -> None:
        self.calls.append("renew")

    def stop(self) -> None:
        self.calls.append("stop")


def run(task, canceled=lambda: False, preempted=lambda: False):
    clock, published = Clock(), []
    ending = follow(task, canceled, published.append, preempted, clock, clock.sleep)
    return ending, published, clock


def test_a_task_that_ends_well_succeeds_with_its_feedback_published():
    task = Scripted([Progress(status="RUNNING", feedback={"status": "RUNNING"}),
                     Progress(done=True, ok=True, status="DONE", message="there",
                              values={"waypoints": ["a"]})])
    ending, published, _ = run(task)
    assert ending.outcome is Outcome.SUCCEEDED and ending.message == "there"
    assert ending.status == "DONE" and ending.values == {"waypoints": ["a"]}
    assert published == [{"status": "RUNNING"}] and "stop" not in task.calls


def test_a_task_the_robot_ends_badly_aborts_without_a_stop():
    ending, _, _ = run(Scripted([Progress(done=True, ok=False, status="STUCK")]))
    assert ending.outcome is Outcome.ABORTED and ending.message == "scripted ended: STUCK"


def test_a_refused_start_aborts_with_the_reason_and_sends_nothing_more():
    refusal = CommandError("unknown dock id 7")
    refusal.result_values = {"failed_nodes": ["x"]}
    task = Scripted([Progress()], refuse=refusal)
    ending, _, _ = run(task)
    assert ending.outcome is Outcome.ABORTED and ending.message == "unknown dock id 7"
    assert ending.values == {"failed_nodes": ["x"]} and task.calls == ["start"]


def test_cancel_stops_the_robot():
    task = Scripted([Progress(status="RUNNING")])
    polls = iter([False, False, True])
    ending, _, _ = run(task, canceled=lambda: next(polls))
    assert ending.outcome is Outcome.CANCELED and task.calls[-1] == "stop"


def test_a_timeout_stops_the_robot_and_says_so():
    task = Scripted([Progress(status="RUNNING")], timeout=1.0)
    ending, _, clock = run(task)
    assert ending.outcome is Outcome.ABORTED and "timed out after 1 s" in ending.message
    assert "RUNNING" in ending.message and task.calls[-1] == "stop"
    assert 1.0 < clock.now < 1.3


def test_an_error_while_following_stops_the_robot():
    task = Scripted([Progress(status="RUNNING")], fail_at=2)
    ending, _, _ = run(task)
    assert ending.outcome is Outcome.ABORTED and ending.message == "the robot went away"
    assert task.calls[-1] == "stop"


def test_a_preempted_task_leaves_the_robot_to_the_newer_command():
    task = Scripted([Progress(status="RUNNING")])
    flags = iter([False, True])
    ending, _, _ = run(task, preempted=lambda: next(flags))
    assert ending.outcome is Outcome.ABORTED and ending.message == "preempted by a newer goal"
    assert "stop" not in task.calls


def test_renew_is_called_every_renew_s():
    task = Scripted([Progress()] * 35 + [Progress(done=True, ok=True)])
    task.renew_s = 1.0
    run(task)
    assert task.calls.count("renew") == 3  # 3.5 s of polls at 0.1 s


def test_a_reject_slot_holds_one_goal_until_it_ends():
    slot = GoalSlot("docking", GoalPolicy.REJECT)
    assert slot.accept() and not slot.accept()
    slot.begin()
    assert not slot.accept()
    slot.end()
    assert slot.accept()


def test_a_preempt_slot_marks_the_older_goal_and_waits_for_it_to_let_go():
    slot = GoalSlot("arm", GoalPolicy.PREEMPT)
    assert slot.accept() and slot.accept()
    first = slot.begin()
    assert not slot.preempted(first)
    started = []

    def newer():
        started.append(slot.begin())

    thread = threading.Thread(target=newer)
    thread.start()
    deadline = time.monotonic() + 2.0
    while not slot.preempted(first) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert slot.preempted(first) and not started  # the newer goal waits for the older
    slot.end()
    thread.join(timeout=2.0)
    assert started and not slot.preempted(started[0])
    slot.end()


@pytest.mark.parametrize("policy", list(GoalPolicy))
def test_slots_accept_after_every_goal_ended(policy):
    slot = GoalSlot("x", policy)
    for _ in range(3):
        assert slot.accept()
        slot.begin()
        slot.end()
