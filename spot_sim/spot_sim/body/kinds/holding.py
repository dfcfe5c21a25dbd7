"""Kinds that hold the body where it is: stop (a mobility command), the full-body stop and
freeze, and a dance's command (the dance, ``spot_sim.choreography``, moves the body itself)."""

from spot_sim.body.kinds.kind import Kind, present

KINDS = (
    Kind("stop", "stop_request", allowed_in_fault=True, feedback=present("stop_feedback")),
    Kind("stop_fb", "stop_request", full_body=True, allowed_in_fault=True,
         feedback=present("stop_feedback")),
    Kind("freeze", "freeze_request", full_body=True, allowed_in_fault=True,
         feedback=present("freeze_feedback")),
    Kind("choreography"),
)
