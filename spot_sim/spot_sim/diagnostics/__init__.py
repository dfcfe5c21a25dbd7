"""What the simulated robot reports and signals beyond its state: service faults, logs,
and the audio-visual system, with their services."""
