"""A simulated Boston Dynamics Spot: a gRPC server speaking the real Spot API over TLS.

The official ``bosdyn-client`` SDK connects to it exactly as to a robot. The driver never imports
this package; tests and ``make run`` start it as a separate server.
"""

from spot_sim.server import SimConfig, SimulatedSpot

__all__ = ["SimConfig", "SimulatedSpot"]
