"""The robot's own time on an answer (``robot_time.RobotTime``), read from the response header
the SDK hands its response processors: per thread, taken once."""

import threading

from bosdyn.api import robot_state_pb2

from spot_driver.core.robot_time import RobotTime


def response(received_ns: int | None, answered_ns: int) -> robot_state_pb2.RobotStateResponse:
    out = robot_state_pb2.RobotStateResponse()
    if received_ns is not None:
        out.header.request_received_timestamp.FromNanoseconds(received_ns)
    out.header.response_timestamp.FromNanoseconds(answered_ns)
    return out


def test_the_robot_time_is_the_headers_response_less_receive_stamp_taken_once():
    recorder = RobotTime()
    assert recorder.take() is None
    recorder.mutate(response(1_999_000_000, 2_004_500_000))  # across a second boundary
    assert recorder.take() == 5_500_000
    assert recorder.take() is None  # taken


def test_an_answer_without_stamps_says_nothing():
    recorder = RobotTime()
    recorder.mutate(response(None, 5))
    recorder.mutate(object())  # not a Spot API response
    assert recorder.take() is None


def test_each_thread_reads_its_own_last_answer():
    recorder = RobotTime()
    recorder.mutate(response(0 + 10**9, 10**9 + 1_000))
    seen = []
    thread = threading.Thread(target=lambda: (recorder.mutate(response(10**9, 10**9 + 7)),
                                              seen.append(recorder.take())))
    thread.start()
    thread.join()
    assert seen == [7] and recorder.take() == 1_000
