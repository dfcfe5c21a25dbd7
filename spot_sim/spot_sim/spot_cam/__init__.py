"""The Spot CAM payload's simulated parts (heads, cameras, compositor, audio, lights, power,
media log, stream) and the services that serve them."""
