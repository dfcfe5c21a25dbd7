"""The simulator's choreography: the move catalog (moves.yaml), upload validation, dances
stepped in the physics loop, and the choreography service."""
