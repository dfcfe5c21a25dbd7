"""The robot's state as clients read it: the RobotState report (built from the body's frozen
reading), the link models and the robot-state service."""
