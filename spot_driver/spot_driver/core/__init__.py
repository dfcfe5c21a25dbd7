"""The driver's plumbing, shared by every capability: the robot connection and its session,
errors and refusals, QoS, paced acquisition, parameters and launch arguments, shutdown.
It imports no capability."""
