"""The arm and gripper: trajectories, kinematics, contact, the manipulation API's tasks,
constrained manipulation and surface contact, and the services and robot-command parts that
serve them."""
