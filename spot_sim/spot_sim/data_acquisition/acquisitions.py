"""Data-acquisition requests: each AcquireData runs on a thread of its own, capturing its
items one after another into the store (ACQUIRING, SAVING, COMPLETE), and can be cancelled
between items. A capture the robot lacks is delegated to a payload plugin offering it
(``plugins``); a request naming one nobody offers is refused whole at the start
(STATUS_UNKNOWN_CAPTURE_TYPE), as the robot does.

Capture times are ours (no published figures): an image 0.1 s, data 0.05 s, a Spot CAM still
1 s (the PTZ focuses and the panorama stitches).
"""

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from bosdyn.api import data_acquisition_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.data_acquisition.plugins import Plugins
from spot_sim.data_acquisition.store import IMAGE, METADATA, CaptureStore

Status = data_acquisition_pb2.GetStatusResponse
PLUGIN = "plugin"  # a capture a payload plugin made and stored
DataIdentifier = data_acquisition_pb2.DataIdentifier


class UnknownCaptureError(ValueError):
    """A capture name, image service or image source the robot does not have."""


@dataclass(frozen=True)
class Source:
    """A named data capture: its description, channel, how long it takes and what it stores
    (``capture()`` -> (kind, payload): IMAGE and an ImageCapture, or DATA and (bytes, ext))."""

    name: str
    description: str
    seconds: float
    capture: Callable[[], tuple[str, object]]


@dataclass
class _Request:
    action_id: object
    items: list  # (channel, seconds, capture)
    status: int = Status.STATUS_ACQUIRING
    saved: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)


class Acquisitions:
    """The robot's data-acquisition requests by id."""

    IMAGE_S, DATA_S = 0.1, 0.05

    def __init__(self, store: CaptureStore, sources: dict[str, Source],
                 image: Callable[[object], tuple[str, object]],
                 plugins: Plugins | None = None) -> None:
        """``image(ImageSourceCapture)`` -> (channel, ImageCapture), UnknownCaptureError for a
        source the robot lacks; ``plugins``: payload plugins for the captures it lacks."""
        self.store, self.sources, self._image = store, sources, image
        self.plugins = plugins
        self._lock = OrderedLock("acquisitions", LEAF)
        self._requests: dict[int, _Request] = {}
        self._ids = itertools.count(1)

    def start(self, action_id, requests, metadata) -> int:
        """Check every item, then capture them on a thread; returns the request id."""
        items = []
        cancel = threading.Event()
        for capture in requests.data_captures:
            items.append(self._item(capture, action_id, metadata, cancel))
        for capture in requests.image_captures:
            channel, shot = self._image(capture)  # refuses unknown sources before starting
            items.append((channel, self.IMAGE_S, lambda shot=shot: (IMAGE, shot)))
        if not items:
            raise UnknownCaptureError("the request names nothing to capture")
        if metadata.ByteSize():
            entry = data_acquisition_pb2.AssociatedMetadata(metadata=metadata)
            entry.reference_id.action_id.CopyFrom(action_id)
            items.append(("metadata", self.DATA_S, lambda: (METADATA, entry)))
        request = _Request(action_id, items, cancel=cancel)
        with self._lock:
            request_id = next(self._ids)
            self._requests[request_id] = request
        threading.Thread(target=self._run, args=(request,), daemon=True,
                         name=f"daq-{request_id}").start()
        return request_id

    def _item(self, capture, action_id, metadata, cancel: threading.Event) -> tuple:
        """(channel, seconds, capture()) of a data capture: the robot's own, or a payload
        plugin's (UnknownCaptureError when neither offers it)."""
        source = self.sources.get(capture.name)
        if source is not None:
            return source.name, source.seconds, source.capture
        plugin = self.plugins.offering(capture.name) if self.plugins is not None else None
        if plugin is None:
            raise UnknownCaptureError(f"no data capture named {capture.name!r}; this "
                                      f"robot has {', '.join(sorted(self.sources))}")
        return capture.name, 0.0, lambda: (PLUGIN, self.plugins.acquire(
            plugin, action_id, capture, metadata, cancel))

    def _run(self, request: _Request) -> None:
        for channel, seconds, capture in request.items:
            if request.cancel.wait(seconds):
                with self._lock:
                    request.status = Status.STATUS_ACQUISITION_CANCELLED
                return
            data_id = DataIdentifier(channel=channel)
            data_id.action_id.CopyFrom(request.action_id)
            try:
                kind, payload = capture()
            except Exception as exc:  # a capture that fails is the robot's data error
                if request.cancel.is_set():  # a plugin's capture stopped by the cancel
                    with self._lock:
                        request.status = Status.STATUS_ACQUISITION_CANCELLED
                    return
                with self._lock:
                    request.errors.append(data_acquisition_pb2.DataError(
                        data_id=data_id, error_message=f"{channel}: {exc}"))
                continue
            if kind == PLUGIN:  # the plugin stored its data itself
                with self._lock:
                    request.status = Status.STATUS_SAVING
                    request.saved.extend(payload)
                continue
            if kind == METADATA:
                payload.reference_id.channel = channel
            data_id.id = self.store.add(data_id, kind, payload)
            with self._lock:
                request.status = Status.STATUS_SAVING
                request.saved.append(data_id)
        with self._lock:
            request.status = Status.STATUS_DATA_ERROR if request.errors \
                else Status.STATUS_COMPLETE

    def status(self, request_id: int, out: Status) -> None:
        with self._lock:
            request = self._requests.get(request_id)
            if request is None:
                out.status = Status.STATUS_REQUEST_ID_DOES_NOT_EXIST
                return
            out.status = request.status
            out.data_saved.extend(request.saved)
            out.data_errors.extend(request.errors)

    def cancel(self, request_id: int) -> int:
        """A CancelAcquisitionResponse status."""
        response = data_acquisition_pb2.CancelAcquisitionResponse
        with self._lock:
            request = self._requests.get(request_id)
            if request is None:
                return response.STATUS_REQUEST_ID_DOES_NOT_EXIST
            if request.status in (Status.STATUS_COMPLETE, Status.STATUS_DATA_ERROR,
                                  Status.STATUS_ACQUISITION_CANCELLED):
                return response.STATUS_FAILED_TO_CANCEL
            request.status = Status.STATUS_CANCEL_IN_PROGRESS
            request.cancel.set()
        return response.STATUS_OK
