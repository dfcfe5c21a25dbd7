"""Where the sensors' renders run: in worker processes of their own, as a robot renders its
cameras on hardware of its own, so the interpreter that serves gRPC, commands and the state
stream never waits behind a render; with no workers, in the caller's process, one at a time.

A worker (``python -m spot_sim.perception.render_worker``) is sent the scene once and then
one request at a time over its pipes: the source, the pose and the format; its answer is the
image's bytes (or the lidar's points and encoded data). Workers run on CPU nothing else
wants (``render_worker.py``): on a machine short of cores a camera falls below its rate, as
a robot's would with too little hardware, but never delays a velocity command or the state.
A worker that dies is replaced and the request asked once again; a worker whose pipes close
(the robot stopped or killed) exits. Closing the pool refuses the renders still waiting for a
worker (``RendersStoppedError``): none is left waiting, so nothing holds the process at exit.
"""

import os
import pickle
import queue
import subprocess
import sys

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.perception.gripper_camera import Look
from spot_sim.perception.renderer import Pose, Renderer
from spot_sim.perception.scene import Scene
from spot_sim.perception.sources import CameraSource

WORKER_MODULE = "spot_sim.perception.render_worker"
# A render makes a dozen frame-sized temporaries; glibc gives each one fresh pages (mmap)
# and takes them back, and the page faults cost as much as the arithmetic. A worker keeps
# them in its heap instead: a 640x480 visual render takes 8.5 ms instead of 13 here.
_KEEP_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20),
                "MALLOC_TOP_PAD_": str(64 << 20)}


_CLOSED = object()  # in the idle queue once the pool is closed


class RenderError(RuntimeError):
    """A render failed in its worker (the worker's own error)."""


class RendersStoppedError(RenderError):
    """The pool is closed (the robot stopping): no render now or later."""

    def __init__(self) -> None:
        super().__init__("the simulated robot's renderers are stopped")


class _Worker:
    """One render process and its pipes; used by one caller at a time."""

    def __init__(self, scene: bytes) -> None:
        env = dict(os.environ, **_KEEP_MEMORY,
                   PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self._process = subprocess.Popen([sys.executable, "-m", WORKER_MODULE],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=env)
        self._process.stdin.write(scene)
        self._process.stdin.flush()

    def ask(self, job: str, args: tuple):
        """The worker's answer to ``Renderer.<job>(*args)``; EOFError or OSError if it died."""
        pickle.dump((job, args), self._process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self._process.stdin.flush()
        ok, value = pickle.load(self._process.stdout)
        if not ok:
            raise RenderError(value)
        return value

    @property
    def pid(self) -> int:
        return self._process.pid

    def stop(self) -> None:
        """End the worker now (it holds nothing; on a busy machine a worker that only runs on
        idle CPU could take seconds to see its pipe close) and reap it."""
        try:
            self._process.stdin.close()
        except OSError:
            pass
        self._process.kill()
        self._process.wait()


class RenderPool:
    """Renders ``scene`` in ``workers`` processes (0: in this one, one at a time)."""

    def __init__(self, scene: Scene, workers: int) -> None:
        if workers < 0:
            raise ValueError(f"render workers must be 0 or more, not {workers}")
        self.workers = workers
        self._scene = pickle.dumps(scene, protocol=pickle.HIGHEST_PROTOCOL)
        self._inline = Renderer(scene) if workers == 0 else None
        self._inline_lock = OrderedLock("inline renderer", LEAF)
        # The workers not rendering now; after close, only _CLOSED (every waiter sees it).
        self._idle: queue.Queue[_Worker | object] = queue.Queue()
        self._lock = OrderedLock("render pool", LEAF)  # guards _started, _closed and _idle
        self._started = self._closed = False

    def start(self) -> None:
        """Start the workers (each takes a moment to import numpy); returns at once. The
        first render starts them if this was not called."""
        with self._lock:
            if self._closed:
                raise RendersStoppedError()
            if self._started:
                return
            self._started = True
            for _ in range(self.workers):
                self._idle.put(_Worker(self._scene))

    def pids(self) -> list[int]:
        """The process ids of the workers not rendering now (every worker, when idle)."""
        with self._idle.mutex:
            return [worker.pid for worker in self._idle.queue if worker is not _CLOSED]

    def encoded(self, source: CameraSource, pose: Pose, pixel_format: int, look: Look,
                quality: int | None) -> bytes:
        """``Renderer.encoded`` of the source from ``pose``."""
        return self._run("encoded", (source, pose, pixel_format, look, quality))

    def lidar(self, pose: Pose, encoding: int):
        """``Renderer.lidar`` from ``pose``."""
        return self._run("lidar", (pose, encoding))

    def close(self) -> None:
        """Stop the workers (those rendering, once done); renders waiting for a worker and
        later ones raise RendersStoppedError."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    self._idle.get_nowait().stop()
                except queue.Empty:
                    break
            self._idle.put(_CLOSED)

    def _run(self, job: str, args: tuple):
        if self._inline is not None:
            with self._inline_lock:
                return getattr(self._inline, job)(*args)
        self.start()
        worker = self._idle.get()
        if worker is _CLOSED:  # the pool closed while this render waited: the next waiter too
            self._idle.put(_CLOSED)
            raise RendersStoppedError()
        try:
            try:
                return worker.ask(job, args)
            except (EOFError, OSError, pickle.UnpicklingError):  # it died: once more anew
                worker.stop()
                worker = _Worker(self._scene)
                return worker.ask(job, args)
        finally:
            with self._lock:
                if self._closed:
                    worker.stop()
                else:
                    self._idle.put(worker)
