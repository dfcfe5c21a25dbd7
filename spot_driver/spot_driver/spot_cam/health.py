"""The Spot CAM's health as a ``/diagnostics`` status: temperatures (degrees C), built-in
test events and degradations. Pure: built from what the SDK's ``HealthClient`` returned."""

from bosdyn.api.spot_cam import health_pb2
from diagnostic_msgs.msg import DiagnosticStatus

from spot_driver.diagnostics.status import ERROR, OK, STALE, WARN, diagnostic

Degradation = health_pb2.GetBITStatusResponse.Degradation
HOT_C = 70.0  # ours: a payload reading above this is reported as a warning


def health_status(prefix: str, hw: str, temperatures, events, degradations) -> DiagnosticStatus:
    """OK, or WARN with what is wrong (a BIT event, a degradation, a hot channel)."""
    values = {f"{t.channel_name} (C)": f"{t.temperature / 1000.0:.1f}" for t in temperatures}
    problems = [f"{e.name}: {e.error_message}" for e in events]
    problems += [f"{Degradation.DegradationType.Name(d.type)} degraded: {d.description}"
                 for d in degradations]
    problems += [f"{t.channel_name} at {t.temperature / 1000.0:.0f} C"
                 for t in temperatures if t.temperature / 1000.0 > HOT_C]
    values["events"], values["degradations"] = len(events), len(degradations)
    if problems:
        return diagnostic(f"{prefix}spot_cam", WARN, "; ".join(problems), hw, **values)
    return diagnostic(f"{prefix}spot_cam", OK, "Spot CAM healthy", hw, **values)


def unreachable(prefix: str, hw: str, reason: str) -> DiagnosticStatus:
    return diagnostic(f"{prefix}spot_cam", ERROR, f"Spot CAM health unavailable: {reason}", hw)


def not_yet(prefix: str, hw: str) -> DiagnosticStatus:
    return diagnostic(f"{prefix}spot_cam", STALE, "Spot CAM health not read yet", hw)
