"""The robot's data acquisition: capture requests and the store they fill."""
