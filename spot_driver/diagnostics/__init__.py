"""Health: pure /diagnostics status builders (``status.py``) and their node."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="diagnostics",
    summary="/diagnostics (spot_diagnostics)",
    nodes=("spot_driver.diagnostics.node:DiagnosticsNode",),
    optional=False,
    parameters="health")
