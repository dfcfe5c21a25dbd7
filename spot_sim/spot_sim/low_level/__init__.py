"""The joint-control API: joint mode, the servo loop and the two joint streams."""
