"""The simulator's autonomy: GraphNav (map and routes, localization and navigation,
recording, map processing), the local grids around the robot and auto-return, each with the
gRPC services that serve it."""
