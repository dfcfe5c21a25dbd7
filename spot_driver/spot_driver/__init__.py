"""ROS 2 driver for Boston Dynamics Spot."""
