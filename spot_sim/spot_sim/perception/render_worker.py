"""A render worker of ``render_pool.py``: reads the pickled scene from stdin, then answers
each pickled ``(job, args)`` with ``(True, Renderer.<job>(*args))`` or ``(False, error)`` on
stdout; exits when stdin closes. Runs only on CPU nothing else wants (SCHED_IDLE; nice 19
where that is missing): a robot renders its cameras on hardware of their own, so renders
never take time from its serving process, the driver or anything else here. It leaves
Ctrl-C (a terminal's or launch's SIGINT to the whole group) to the robot, which closes the
pipes as it stops.

    python -m spot_sim.perception.render_worker    # started by RenderPool, not by hand
"""

import os
import pickle
import signal
import sys

from spot_sim.perception.renderer import Renderer

JOBS = ("encoded", "lidar")


def serve(requests, answers) -> None:
    """Answer requests from the binary stream ``requests`` on ``answers`` until it ends."""
    renderer = Renderer(pickle.load(requests))
    while True:
        try:
            job, args = pickle.load(requests)
        except EOFError:
            return
        try:
            if job not in JOBS:
                raise ValueError(f"no render job {job!r}")
            answer = (True, getattr(renderer, job)(*args))
        except Exception as exc:
            answer = (False, f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    if hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(19)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # nothing else may write on the answers' pipe
    serve(sys.stdin.buffer, answers)
