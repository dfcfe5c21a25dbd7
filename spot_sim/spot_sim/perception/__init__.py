"""What the robot sees: the scene, its cameras and lidar, the gripper camera's settings,
point-cloud encoding, ray casts, and the image and point-cloud services."""
