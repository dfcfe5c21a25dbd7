"""The robot's HTTPS downloads, with the user's token as a Bearer token:

- the data-acquisition store, as the SDK's ``download_data_REST`` fetches it:
  ``GET /v1/data-buffer/daq-data/?from_nsec=&to_nsec=[&channel=...]``, a zip of the captures
  in that time range (one folder per capture group, files named as the SDK's grpc download
  names them);
- the data buffer as a BDDF file (``spot_sim.data_acquisition.data_buffer_bddf``), as Boston
  Dynamics' bddf_download example fetches it: ``GET /v1/data-buffer/bddf/?from_sec=&to_sec=
  [&channel=...][&type=][&grpc_service=]`` (robot time).

Both answer 204 when there is nothing in range. A robot serves them on port 443 beside gRPC;
the simulator only when given a port.
"""

import io
import ssl
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from bosdyn.api import data_acquisition_store_pb2, image_pb2

from spot_sim.data_acquisition.data_buffer import DataStore
from spot_sim.data_acquisition.data_buffer_bddf import bddf_bytes
from spot_sim.data_acquisition.store import CaptureStore

PATH = "/v1/data-buffer/daq-data/"
PARAMETERS = {"from_nsec", "to_nsec", "channel"}
BDDF_PATH = "/v1/data-buffer/bddf/"
BDDF_PARAMETERS = {"from_sec", "to_sec", "channel", "type", "grpc_service"}
_UNSAFE = ':*?<>|/\\'


def _clean(name: str) -> str:
    cleaned = "".join("_" if c in _UNSAFE else c for c in name)
    return "_" if cleaned in ("", ".", "..") else cleaned


def entry_name(result) -> str | None:
    """``group/action_channel<data_name><ext>`` of a stored image or data (None otherwise)."""
    kind = result.WhichOneof("result")
    if kind == "image":
        extension = ".jpg" if result.image.image.format == image_pb2.Image.FORMAT_JPEG \
            else ".raw"
    elif kind == "data":
        extension = result.data.file_extension or ".bin"
    else:
        return None
    data_id = result.data_id
    return (f"{_clean(data_id.action_id.group_name)}/"
            f"{_clean(data_id.action_id.action_name + '_' + data_id.channel + data_id.data_name)}"
            f"{extension}")


def zipped(store: CaptureStore, from_nsec: int, to_nsec: int, channels: list[str]) -> bytes:
    """The zip of the captures in [from_nsec, to_nsec] (and ``channels``, if any); b"" when
    there are none."""
    query = data_acquisition_store_pb2.QueryParameters(include_images=True, include_data=True,
                                                       channels=channels)
    query.time_range.from_timestamp.FromNanoseconds(from_nsec)
    query.time_range.to_timestamp.FromNanoseconds(to_nsec)
    out, count = io.BytesIO(), 0
    with zipfile.ZipFile(out, "w") as archive:
        while results := store.query(query):
            for result in results:
                name = entry_name(result)
                if name is not None:
                    kind = result.WhichOneof("result")
                    archive.writestr(name, result.image.image.data if kind == "image"
                                     else result.data.data)
                    count += 1
            query.captures_from_id = results[-1].data_id.id + 1
    return out.getvalue() if count else b""


class DaqRest:
    """An HTTPS server of the REST download, on 127.0.0.1:``port``."""

    def __init__(self, store: CaptureStore, data: DataStore, tokens, cert_file, key_file,
                 port: int) -> None:
        handler = type("Handler", (_Handler,), {"store": store, "data": data,
                                                "tokens": tokens})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert_file), str(key_file))
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="daq-rest")

    def start(self) -> "DaqRest":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    store: CaptureStore
    data: DataStore
    tokens = None

    def log_message(self, *args) -> None:
        """Quiet: requests are not logged (they carry a token)."""

    def _fail(self, status: int, message: str) -> None:
        body = message.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path not in (PATH, BDDF_PATH):
            return self._fail(404, f"no such resource {url.path}")
        token = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not token or self.tokens.user_of(token) is None:
            return self._fail(401, "a valid user token is required")
        params = parse_qs(url.query)
        unknown = sorted(set(params) - (PARAMETERS if url.path == PATH else BDDF_PARAMETERS))
        if unknown:
            return self._fail(400, f"unknown parameters {unknown}")
        try:
            if url.path == PATH:
                start = int(params.get("from_nsec", ["0"])[0])
                end = int(params.get("to_nsec", [str(2**62)])[0])
            else:
                start = int(float(params.get("from_sec", ["0"])[0]) * 1e9)
                end = int(float(params.get("to_sec", ["4e9"])[0]) * 1e9)
        except ValueError:
            return self._fail(400, "the time range must be numbers")
        channels = params.get("channel", [])
        if url.path == PATH:
            return self._send(zipped(self.store, start, end, channels), "application/zip",
                              f"daq-{start}-{end}.zip")
        data = bddf_bytes(self.data, start, end, channels, params.get("type", [""])[0])
        return self._send(data, "application/octet-stream", f"download-{start}-{end}.bddf")

    def _send(self, data: bytes, content_type: str, filename: str) -> None:
        if not data:
            self.send_response(204)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Disposition", f'attachment; filename="{filename}"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
