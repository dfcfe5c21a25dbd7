"""What the simulated robot reports and signals, through the SDK's own clients: service faults
shown in its state and cleared, retro and experiment logs, and the audio-visual system's
behaviours by priority."""

import time

import pytest
from bosdyn.api import (
    service_fault_pb2,
)
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.audio_visual import AudioVisualClient
from bosdyn.client.fault import (
    FaultClient,
    ServiceFaultAlreadyExistsError,
    ServiceFaultDoesNotExistError,
)
from bosdyn.client.log_status import (
    ExperimentAlreadyRunningError,
    LogStatusClient,
    RequestIdDoesNotExistError,
)
from test_body_sim import state_of, wait_for

from conftest import client, connect


def test_service_faults_trigger_show_in_state_and_clear(sim, robot):
    faults = client(robot, FaultClient)
    fault = service_fault_pb2.ServiceFault(error_message="camera unplugged",
                                           severity=service_fault_pb2.ServiceFault.SEVERITY_WARN)
    fault.fault_id.fault_name = "camera"
    fault.fault_id.service_name = "my-service"
    faults.trigger_service_fault(fault)
    active = state_of(robot).service_fault_state.faults
    assert [f.error_message for f in active] == ["camera unplugged"]
    with pytest.raises(ServiceFaultAlreadyExistsError):
        faults.trigger_service_fault(fault)  # already active
    faults.clear_service_fault(fault.fault_id)
    assert not state_of(robot).service_fault_state.faults
    with pytest.raises(ServiceFaultDoesNotExistError):
        faults.clear_service_fault(fault.fault_id)


def test_log_status_experiment_and_retro_logs(sim, robot):
    logs = client(robot, LogStatusClient)
    started = logs.start_experiment_log(0.5)
    log_id = started.log_status.id
    assert logs.get_log_status(log_id).log_status.status == \
        started.log_status.STATUS_IN_PROGRESS
    assert [s.id for s in logs.get_active_log_statuses().log_statuses] == [log_id]
    with pytest.raises(ExperimentAlreadyRunningError):
        logs.start_experiment_log(1.0)  # one experiment log at a time
    assert wait_for(lambda: logs.get_log_status(log_id).log_status.status
                    == started.log_status.STATUS_DONE, 3.0)
    retro = logs.start_retro_log(5.0)
    logs.terminate_log(retro.log_status.id)
    with pytest.raises(RequestIdDoesNotExistError):
        logs.get_log_status("no-such-log")


def test_audio_visual_behaviours_play_by_priority_and_bad_ones_change_nothing(equipped_sim,
                                                                              equipped_robot):
    from bosdyn.api import audio_visual_pb2 as av
    from bosdyn.client import audio_visual as av_client

    lights = client(equipped_robot, AudioVisualClient)
    equipped_robot.time_sync.wait_for_sync(timeout_sec=5.0)  # end times are in robot time
    permanent = {b.name for b in lights.list_behaviors() if b.permanent}
    assert permanent == {"robot_normal", "robot_warning", "robot_danger"}
    behavior = av.AudioVisualBehavior(enabled=True, priority=15)
    blink = behavior.led_sequence_group.front_center.blink_sequence
    blink.color.rgb.r, blink.period.nanos, blink.duty_cycle = 255, 500_000_000, 0.5
    lights.add_or_modify_behavior("beacon", behavior)
    bad = av.AudioVisualBehavior()
    bad.CopyFrom(behavior)
    bad.led_sequence_group.front_center.blink_sequence.period.seconds = 30
    with pytest.raises(av_client.InvalidBehaviorError):
        lights.add_or_modify_behavior("beacon", bad)
    with pytest.raises(av_client.PermanentBehaviorError):
        lights.add_or_modify_behavior("robot_normal", behavior)
    assert next(b for b in lights.list_behaviors() if b.name == "beacon").behavior == behavior
    Result = av.RunBehaviorResponse
    soon = time.time() + 5.0
    assert lights.run_behavior("beacon", soon).run_result == Result.RESULT_BEHAVIOR_RUN
    assert lights.run_behavior("robot_normal", soon).run_result == Result.RESULT_LOW_PRIORITY
    assert lights.run_behavior("beacon", soon).run_result == Result.RESULT_ALREADY_RUNNING
    with pytest.raises(av_client.BehaviorExpiredError):
        lights.run_behavior("beacon", time.time() - 60.0)
    with pytest.raises(av_client.DoesNotExistError):
        lights.run_behavior("nothing", soon)
    other = connect(equipped_sim)
    with pytest.raises(av_client.InvalidClientError):  # not the client that ran it
        client(other, AudioVisualClient).stop_behavior("beacon")
    other.time_sync.stop()
    lights.stop_behavior("beacon")
    with pytest.raises(sdk_errors.InvalidRequestError):
        lights.set_system_params(max_brightness=1.5)
    assert lights.get_system_params().params.max_brightness == pytest.approx(1.0)
    lights.set_system_params(enabled=False, max_brightness=0.4)
    assert lights.run_behavior("beacon", soon).run_result == Result.RESULT_SYSTEM_DISABLED
    lights.set_system_params(enabled=True)
    with pytest.raises(av_client.PermanentBehaviorError):
        lights.delete_behaviors(["robot_danger"])
    assert [b.name for b in lights.delete_behaviors(["beacon"])] == ["beacon"]
    with pytest.raises(av_client.DoesNotExistError):
        lights.delete_behaviors(["beacon"])
