"""The simulated robot's body, in parts that each hold one kind of state.

The parts are plain classes with no lock and no thread: ``SimRobot`` owns them, keeps them
behind its one lock and applies the rules that join them (cutting power ends motion, a fall
lies the robot down).
"""
