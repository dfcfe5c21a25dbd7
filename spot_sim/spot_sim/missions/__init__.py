"""The simulated robot's missions: behavior trees compiled from ``bosdyn.api.mission.Node``
and ticked by a runner with a blackboard, Autowalk compiled into them, and their services."""
