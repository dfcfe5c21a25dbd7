"""Data-acquisition plugins on payloads: services of type DataAcquisitionPluginService
registered in the robot's directory.

The robot asks each for its capabilities. A capture that one of them offers is delegated to
it, as a robot does: AcquirePluginData with the request's action id, then GetStatus until the
plugin says it is done. The plugin stores what it captured in the robot's data-acquisition
store itself (through the store service, as plugins do), and its status lists what it saved.
"""

import threading
import time

import grpc
from bosdyn.api import data_acquisition_pb2 as daq
from bosdyn.api import data_acquisition_plugin_service_pb2_grpc as plugin_grpc

from spot_sim.core.directory import Directory
from spot_sim.core.lock_order import LEAF, OrderedLock

PLUGIN_TYPE = "bosdyn.api.DataAcquisitionPluginService"
ASK_S = 2.0  # how long a plugin may take to answer one call [ours]
POLL_S = 0.1  # between GetStatus calls
ACQUIRE_S = 60.0  # a plugin capture taking longer is a data error [ours]
Status = daq.GetStatusResponse
_DONE = {Status.STATUS_COMPLETE, Status.STATUS_DATA_ERROR, Status.STATUS_INTERNAL_ERROR,
         Status.STATUS_REQUEST_ID_DOES_NOT_EXIST, Status.STATUS_ACQUISITION_CANCELLED}


class PluginError(RuntimeError):
    """A plugin refused, failed or did not finish a capture."""


class Plugins:
    """The payload plugins the directory lists; thread safe."""

    def __init__(self, directory: Directory) -> None:
        self._directory = directory
        self._channels: dict[str, grpc.Channel] = {}
        self._lock = OrderedLock("acquisition plugins", LEAF)  # the channels

    def _stub(self, name: str):
        target = self._directory.endpoint_of(name)
        if target is None:
            return None
        with self._lock:
            if target not in self._channels:
                self._channels[target] = grpc.insecure_channel(target)
            return plugin_grpc.DataAcquisitionPluginServiceStub(self._channels[target])

    def capabilities(self) -> list[tuple[str, daq.AcquisitionCapabilityList]]:
        """(service name, capabilities) of every registered plugin that answers."""
        found = []
        for entry in self._directory.entries():
            stub = self._stub(entry.name) if entry.type == PLUGIN_TYPE else None
            if stub is None:
                continue
            try:
                info = stub.GetServiceInfo(daq.GetServiceInfoRequest(), timeout=ASK_S)
            except grpc.RpcError:
                continue  # a plugin that does not answer offers nothing
            found.append((entry.name, info.capabilities))
        return found

    def offering(self, capture: str) -> str | None:
        """The name of a plugin offering the data capture ``capture`` (None: none does)."""
        for name, capabilities in self.capabilities():
            if any(source.name == capture for source in capabilities.data_sources):
                return name
        return None

    def acquire(self, name: str, action_id, capture, metadata,
                cancel: threading.Event) -> list[daq.DataIdentifier]:
        """Run ``capture`` (a DataCapture) on plugin ``name``; what it saved."""
        stub = self._stub(name)
        if stub is None:
            raise PluginError(f"plugin {name!r} is no longer registered")
        request = daq.AcquirePluginDataRequest(action_id=action_id, metadata=metadata)
        request.acquisition_requests.data_captures.add().CopyFrom(capture)
        request.data_id.add(action_id=action_id, channel=capture.name)
        try:
            started = stub.AcquirePluginData(request, timeout=ASK_S)
            if started.status != daq.AcquirePluginDataResponse.STATUS_OK:
                raise PluginError(f"plugin {name!r} refused: "
                                  f"{daq.AcquirePluginDataResponse.Status.Name(started.status)}")
            return self._wait(stub, name, started.request_id, cancel)
        except grpc.RpcError as exc:
            raise PluginError(f"plugin {name!r}: {exc.code().name}") from None

    def _wait(self, stub, name: str, request_id: int,
              cancel: threading.Event) -> list[daq.DataIdentifier]:
        deadline = time.monotonic() + ACQUIRE_S
        while time.monotonic() < deadline:
            if cancel.wait(POLL_S):
                stub.CancelAcquisition(daq.CancelAcquisitionRequest(request_id=request_id),
                                       timeout=ASK_S)
                raise PluginError(f"plugin {name!r}: cancelled")
            status = stub.GetStatus(daq.GetStatusRequest(request_id=request_id), timeout=ASK_S)
            if status.status == Status.STATUS_COMPLETE:  # each saved item once
                return list({d.SerializeToString(): d for d in status.data_saved}.values())
            if status.status in _DONE:
                errors = "; ".join([e.error_message for e in status.data_errors]
                                   or [status.header.error.message])
                raise PluginError(f"plugin {name!r}: {Status.Status.Name(status.status)}"
                                  f"{': ' + errors if errors else ''}")
        raise PluginError(f"plugin {name!r} did not finish within {ACQUIRE_S:g} s")

    def close(self) -> None:
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            channel.close()
