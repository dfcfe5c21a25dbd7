"""The robot's state as clients read it: the RobotState report, the frame tree, the link
models and the robot-state service."""
