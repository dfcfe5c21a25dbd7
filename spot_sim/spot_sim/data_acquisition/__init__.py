"""The robot's data acquisition and data buffer: capture requests, the store they fill, what
clients log, and the BDDF download, with their services."""
