"""std_srvs/Trigger callbacks that run an action and report its outcome as a sentence."""

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
