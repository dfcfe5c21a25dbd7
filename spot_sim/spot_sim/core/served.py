"""gRPC servicers of the simulated robot, one module per Spot API service.

Each module declares what it serves in ``SERVICES``: one ``Served`` per gRPC service (or
directory entry), with the function that builds its servicer from the robot's parts and the
optional hardware it needs. ``registry.py`` lists the modules; the server serves what they
declare, in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the server's assembly of parts (it imports this module)
    from spot_sim.parts import SimParts


@dataclass(frozen=True)
class ServiceSpec:
    """How a servicer appears in the directory and attaches to the gRPC server."""

    name: str
    type: str
    authority: str
    add_to_server: Callable[[Any, Any], None]
    user_token_required: bool = True


@dataclass(frozen=True)
class Served:
    """One service of the simulated robot: its spec, ``build(parts)`` -> servicer, and the
    ``hardware`` option (``spot_sim.core.hardware``) without which it is not served."""

    spec: ServiceSpec
    build: Callable[[SimParts], Any]  # SimParts: spot_sim/parts.py
    hardware: str = ""
