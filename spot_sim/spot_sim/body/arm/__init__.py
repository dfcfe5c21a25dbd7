"""The arm and gripper, a part of the body: the model (joints, gripper, the task moving them),
its kinematics, and the arm and gripper commands of a RobotCommand (joint moves, Cartesian and
velocity moves, gaze, impedance, constrained manipulation, the contact geometry they share)."""
