"""The simulated robot's mission service engine: behavior trees compiled from
``bosdyn.api.mission.Node`` and ticked by a runner with a blackboard."""
