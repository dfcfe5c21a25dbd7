"""What the simulator's servicers are built from (``SimParts``): the parts the server builds
once, handed to each service's ``build`` (``core/served.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

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
from spot_sim.docking.docking import Docking
from spot_sim.docking.world import DockWorld
from spot_sim.perception.sensors import Sensors
from spot_sim.spot_cam.parts import SpotCam

T = TypeVar("T")


@dataclass
class SimParts:
    """What servicers are built from: the robot's configuration, clock and state, the parts
    beside it (sensors, GraphNav, the data buffer, the capture store, the payload registry, the
    docks and docking, the Spot CAM's parts when it has one), each built once by the server,
    and the servicers built so far by service name (a servicer that calls another gets it by
    its class; ``registry`` orders them so)."""

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
    world: DockWorld
    docking: Docking
    servicers: dict[str, Any] = field(default_factory=dict)

    def servicer(self, kind: type[T]) -> T:
        """The servicer of class ``kind`` (built earlier in the registry's order)."""
        for built in self.servicers.values():
            if isinstance(built, kind):
                return built
        raise LookupError(f"no {kind.__name__} built yet (see registry.MODULES' order)")
