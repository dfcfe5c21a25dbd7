"""The simulated robot's body, in parts that each hold one kind of state: power, legs (with
joint mode's servo), base, arm and gripper, the command book, battery and faults.

The parts are plain classes with no lock and no thread: ``SimRobot`` owns them, keeps them
behind its one lock and applies the rules that join them (cutting power ends motion, a fall
lies the robot down). The body imports nothing above it: capabilities above read it through
frozen readings (``reading.py``) and move it through its verbs.
"""
