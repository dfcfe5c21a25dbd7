"""Service callbacks that run an action and report its outcome as a sentence (std_srvs/Trigger
and any response with ``success`` and ``message``): ``answer`` is the one fallback every such
service of the driver answers through."""

from collections.abc import Callable

from spot_driver.core.errors import describe


def answer(logger, name: str, response, fill: Callable[[], str]):
    """``response`` (with ``success`` and ``message``) once ``fill()`` filled the rest and
    returned the message; an exception makes it a failure with the reason, also logged."""
    try:
        response.message = fill()
        response.success = True
    except Exception as exc:
        response.success, response.message = False, describe(exc)
        logger.warning(f"{name}: {response.message}")
    return response


def trigger_callback(logger, name: str, action: Callable[[], str]):
    """A Trigger service callback: ``action()``'s message on success, the reason (also
    logged) on failure."""
    return lambda request, response: answer(logger, name, response, action)


def answer_callback(logger, name: str, fill: Callable[[object, object], str]):
    """A callback for any service whose response has ``success`` and ``message``:
    ``fill(request, response)`` fills the rest and returns the message."""
    return lambda request, response: answer(logger, name, response,
                                            lambda: fill(request, response))
