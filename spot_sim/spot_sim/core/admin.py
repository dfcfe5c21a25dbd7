"""A small HTTP control channel on 127.0.0.1 for fault injection.

``POST /faults/<name>`` with a JSON object of keyword arguments calls ``FaultControl.<name>``
(for example ``curl -d '{"latency": 0.2, "jitter": 0.05}' 127.0.0.1:PORT/faults/set_latency``).
``GET /status`` returns whether the link is up, the command count and the motor power.
"""

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from spot_sim.core.fault_injection import FaultControl

_LOG = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
ACTIONS = ("drop_link", "restore_link", "set_latency", "fail_rpc", "clear", "reboot",
           "steal_lease", "fall", "drain_battery", "jump_clock")


class AdminServer:
    """Serves ``FaultControl`` of one simulated robot until ``stop()``."""

    def __init__(self, sim, port: int = 0) -> None:
        faults: FaultControl = sim.faults

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: HTTPStatus, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path != "/status":
                    self._reply(HTTPStatus.NOT_FOUND, {"error": f"no such path {self.path}"})
                    return
                self._reply(HTTPStatus.OK, {"link_up": sim.link_up,
                                            "commands": sim.commands.count(),
                                            "powered": sim.robot.powered})

            def do_POST(self) -> None:
                prefix = "/faults/"
                name = self.path[len(prefix):] if self.path.startswith(prefix) else ""
                if name not in ACTIONS:
                    self._reply(HTTPStatus.NOT_FOUND,
                                {"error": f"unknown fault {name!r}; one of {list(ACTIONS)}"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    kwargs = json.loads(self.rfile.read(length) or b"{}")
                    if not isinstance(kwargs, dict):
                        raise ValueError("the body must be a JSON object")
                    result = getattr(faults, name)(**kwargs)
                except (TypeError, ValueError, KeyError) as exc:
                    self._reply(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                    return
                self._reply(HTTPStatus.OK, {"done": name, "result": str(result)})

            def log_message(self, format: str, *args) -> None:
                _LOG.debug(format, *args)

        self._server = ThreadingHTTPServer((LOOPBACK, port), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="spot-sim-admin", daemon=True)

    def start(self) -> int:
        self._thread.start()
        return self.port

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
