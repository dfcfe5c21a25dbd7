"""Service callbacks that run an action and report its outcome as a sentence (std_srvs/Trigger
and any response with ``success`` and ``message``)."""

from collections.abc import Callable

from spot_driver.errors import describe


def trigger_callback(logger, name: str, action: Callable[[], str]):
    """A Trigger service callback: ``action()``'s message on success, the reason (also
    logged) on failure."""

    def callback(request, response):
        try:
            response.success, response.message = True, action()
        except Exception as exc:
            response.success, response.message = False, describe(exc)
            logger.warning(f"{name}: {response.message}")
        return response

    return callback


def answer_callback(logger, name: str, fill: Callable[[object, object], str]):
    """A callback for any service whose response has ``success`` and ``message``:
    ``fill(request, response)`` fills the rest and returns the message; an exception makes
    the response a failure with the reason (also logged)."""

    def callback(request, response):
        try:
            response.message = fill(request, response)
            response.success = True
        except Exception as exc:
            response.success, response.message = False, describe(exc)
            logger.warning(f"{name}: {response.message}")
        return response

    return callback
