"""What the driver and the simulated robot share and neither owns: the stage-stamp and crash-log
recorders the tests and benchmarks read, and launch arguments that cannot be mistyped."""
