"""Thin ROS nodes: parameters, publishers, services and timers around the robot connection."""
