"""An rclpy ActionClient safe to call from one thread while an executor spins it in another.

rclpy's ActionClient records a request's sequence number only after sending it; an executor
in another thread can take the server's quick answer first and drop it as unexpected, and the
caller's future never completes ("Ignoring unexpected goal response", ros2/rclpy#1123). rclpy
fixed this with a lock (ros2/rclpy#1308, backported to Jazzy in #1519); the PyPI wheels predate
it. This client takes the same lock around sending and around handling answers. The driver
(spot_ros2_aliases), the examples and the tests use it; with an rclpy that has the fix, the
lock is merely taken twice."""

import threading

from rclpy.action import ActionClient as _RclpyActionClient


class ActionClient(_RclpyActionClient):
    """rclpy's ActionClient with ros2/rclpy#1308's lock."""

    def __init__(self, *args, **kwargs) -> None:
        self._answer_lock = threading.RLock()  # re-entrant: a feedback callback may send
        super().__init__(*args, **kwargs)

    def send_goal_async(self, goal, feedback_callback=None, goal_uuid=None):
        with self._answer_lock:
            return super().send_goal_async(goal, feedback_callback, goal_uuid)

    def _cancel_goal_async(self, goal_handle):
        with self._answer_lock:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle):
        with self._answer_lock:
            return super()._get_result_async(goal_handle)

    async def execute(self, taken_data):
        with self._answer_lock:
            await super().execute(taken_data)
