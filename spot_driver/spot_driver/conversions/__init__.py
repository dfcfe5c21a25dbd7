"""Pure conversions between Spot API protobufs and ROS messages (no node, no I/O)."""
