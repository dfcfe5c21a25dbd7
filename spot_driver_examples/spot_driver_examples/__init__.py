"""Examples of driving Spot through spot_driver, one short rclpy program each (README.md)."""
