"""The simulator's choreography: the move catalog (moves.yaml), upload validation, and dances
stepped in the physics loop."""
