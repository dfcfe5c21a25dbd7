"""Choreography: sequence and animation files, their checks against the robot's move
specifications, and the robot's choreography service (upload, execute, status)."""
