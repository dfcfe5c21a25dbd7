"""The Spot CAM payload's simulated parts."""
