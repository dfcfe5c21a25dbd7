"""gRPC servicers of the simulated robot, one module per Spot API service.

Each module declares what it serves in ``SERVICES``: one ``Served`` per gRPC service (or
directory entry), with the function that builds its servicer from the robot's parts and the
optional hardware it needs. ``registry.py`` lists the modules; the server serves what they
declare, in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the parts' types, for readers and checkers (their modules import this one)
    from spot_sim.autonomy.navigation import GraphNav
    from spot_sim.autonomy.recording import Recorder
    from spot_sim.body.robot import SimRobot
    from spot_sim.core.clock import RobotClock
    from spot_sim.core.config import SimConfig
    from spot_sim.core.directory import Directory
    from spot_sim.core.payloads import PayloadRegistry
    from spot_sim.core.rpc import TokenIssuer
    from spot_sim.data_acquisition.data_buffer import DataStore
    from spot_sim.data_acquisition.store import CaptureStore
    from spot_sim.perception.sensors import Sensors
    from spot_sim.spot_cam.parts import SpotCam

T = TypeVar("T")


@dataclass(frozen=True)
class ServiceSpec:
    """How a servicer appears in the directory and attaches to the gRPC server."""

    name: str
    type: str
    authority: str
    add_to_server: Callable[[Any, Any], None]
    user_token_required: bool = True


@dataclass
class SimParts:
    """What servicers are built from: the robot's configuration, clock and state, the parts
    beside it (sensors, GraphNav, the data buffer, the capture store, the payload registry, the
    Spot CAM's parts when it has one), each built once by the server, and the servicers built
    so far by service name (a servicer that calls another gets it by its class; ``registry``
    orders them so)."""

    config: SimConfig
    clock: RobotClock
    robot: SimRobot
    tokens: TokenIssuer
    sensors: Sensors
    graph_nav: GraphNav
    recorder: Recorder
    data: DataStore
    payloads: PayloadRegistry
    directory: Directory
    captures: CaptureStore
    spot_cam: SpotCam | None
    servicers: dict[str, Any] = field(default_factory=dict)

    def servicer(self, kind: type[T]) -> T:
        """The servicer of class ``kind`` (built earlier in the registry's order)."""
        for built in self.servicers.values():
            if isinstance(built, kind):
                return built
        raise LookupError(f"no {kind.__name__} built yet (see registry.MODULES' order)")


@dataclass(frozen=True)
class Served:
    """One service of the simulated robot: its spec, ``build(parts)`` -> servicer, and the
    ``hardware`` option (``spot_sim.core.hardware``) without which it is not served."""

    spec: ServiceSpec
    build: Callable[[SimParts], Any]
    hardware: str = ""
