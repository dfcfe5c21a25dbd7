"""Health: pure /diagnostics status builders (``status.py``) and their node."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "health (node spot_diagnostics)",
    (
        Parameter("diagnostics_rate", 1.0, "Hz of /diagnostics (diagnostic_msgs/DiagnosticArray)"),
    ))

CAPABILITY = Capability(
    name="diagnostics",
    summary="/diagnostics (spot_diagnostics)",
    nodes=("spot_driver.diagnostics.node:DiagnosticsNode",),
    optional=False,
    parameters=PARAMETERS,
    readme="Connection supervision, health and security (nodes `spot_driver`, `spot_diagnostics`)",
    health=("connection", "time sync", "lease", "e-stop", "power", "battery", "faults"),
    field_test="test/test_core_resilience_e2e.py::test_diagnostics_report_every_aspect_at_1_hz")
