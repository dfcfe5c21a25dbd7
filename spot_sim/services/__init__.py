"""gRPC servicers of the simulated robot, one module per Spot API service."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServiceSpec:
    """How a servicer appears in the directory and attaches to the gRPC server."""

    name: str
    type: str
    authority: str
    add_to_server: Callable[[Any, Any], None]
    user_token_required: bool = True
