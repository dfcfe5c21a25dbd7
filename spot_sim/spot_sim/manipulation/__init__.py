"""Manipulation beyond a RobotCommand: the Manipulation API's walk-to and pick tasks, arm
surface contact and inverse kinematics, using the body's arm (``spot_sim.body.arm``)."""
