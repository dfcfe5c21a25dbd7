"""The ``spot_check`` goal as a followed task: the robot's own calibration and self-check,
started with the driver's lease and followed on its feedback."""

from contextlib import contextmanager

from bosdyn.api.spot import spot_check_pb2 as pb
from bosdyn.client.spot_check import (
    SpotCheckClient,
    SpotCheckNotSittingError,
    SpotCheckResponseError,
)

from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask

Feedback = pb.SpotCheckFeedbackResponse
_ENDED = {Feedback.STATE_FINISHED, Feedback.STATE_USER_ABORTED, Feedback.STATE_ERROR}


def results(feedback: pb.SpotCheckFeedbackResponse) -> list[str]:
    """Each checked part and its verdict, as "camera <name>: <status>" and
    "load cell <name>: <error>" (sorted by name)."""
    cameras = [f"camera {name}: {pb.DepthPlaneSpotCheckResult.Status.Name(r.status)}"
               for name, r in sorted(feedback.camera_results.items())]
    cells = [f"load cell {name}: {pb.LoadCellSpotCheckResult.Error.Name(r.error)}"
             for name, r in sorted(feedback.load_cell_results.items())]
    return cameras + cells


def findings(lines: list[str]) -> list[str]:
    """The results that are not OK."""
    return [line for line in lines if not line.endswith((": STATUS_OK", ": ERROR_NONE"))]


@contextmanager
def _sentences():
    """The SDK's Spot Check errors (raised from a command or from the feedback) as
    sentences."""
    try:
        yield
    except SpotCheckNotSittingError as exc:
        raise CommandError("Spot Check refused: the robot must be sitting (call 'sit' "
                           "first)") from exc
    except SpotCheckResponseError as exc:
        raise CommandError(f"Spot Check failed: {type(exc).__name__}") from exc


class SpotCheckTask(RobotTask):
    """Spot Check from start to its end; cancel or timeout aborts it on the robot. It
    succeeds when the run finished with every part OK; a finished run with findings fails
    and names them."""

    name = "spot_check"
    poll_s = 0.25
    timeout = 300.0  # the SDK's own helper allows 212 s
    canceled_message = "canceled: Spot Check aborted"

    def __init__(self, connection: RobotConnection) -> None:
        connection.require_lease()
        self._connection = connection
        self._client = connection.client(SpotCheckClient)
        self._started = False

    def _command(self, command: int) -> None:
        """The SDK's Spot Check client takes the lease in the request (not from a wallet)."""
        lease = self._connection.wallet_lease()
        if lease is None:
            raise CommandError("no lease: call 'claim' first")
        request = pb.SpotCheckCommandRequest(command=command)
        request.lease.CopyFrom(lease.lease_proto)
        self._client.spot_check_command(request)

    def start(self) -> None:
        with _sentences():
            self._command(pb.SpotCheckCommandRequest.COMMAND_START)

    def poll(self) -> Progress:
        with _sentences():
            feedback = self._client.spot_check_feedback(pb.SpotCheckFeedbackRequest())
        state = Feedback.State.Name(feedback.state)
        progress = Progress(status=state, feedback={"state": state,
                                                    "progress": float(feedback.progress)})
        if feedback.state not in _ENDED and feedback.state != Feedback.STATE_WAITING_FOR_COMMAND:
            self._started = True
        # A finished or aborted state from an earlier run is not this run's end.
        if feedback.state == Feedback.STATE_ERROR or (self._started and
                                                      feedback.state in _ENDED):
            lines = results(feedback)
            progress.values = {"results": lines}
            progress.done = True
            bad = findings(lines)
            if feedback.state == Feedback.STATE_ERROR:
                progress.message = f"Spot Check failed: {Feedback.Error.Name(feedback.error)}"
            elif feedback.state == Feedback.STATE_USER_ABORTED:
                progress.message = "Spot Check was aborted"
            elif bad:
                progress.message = f"Spot Check finished with findings: {'; '.join(bad)}"
            else:
                progress.ok, progress.message = True, "Spot Check finished: every part OK"
        return progress

    def stop(self) -> None:
        self._command(pb.SpotCheckCommandRequest.COMMAND_ABORT)
