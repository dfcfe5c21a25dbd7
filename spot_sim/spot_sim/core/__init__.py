"""Plumbing every simulated service shares: the TLS gRPC server and its directory, response
headers and tokens, leases, time sync, the robot clock and configuration, payloads, and the
fault injection tests use."""
