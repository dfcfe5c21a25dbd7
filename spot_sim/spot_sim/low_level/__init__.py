"""The joint-control API: the two joint streams and their service (joint mode and its servo
law are the body's: ``spot_sim.body.joint_control``)."""
