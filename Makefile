# The two commands of the README. Both run scripts/setup.sh first (fast when nothing changed).
.PHONY: run test test-fast test-field setup lint config docs bench clean ros-tools nav2-tools \
	rviz-tools moveit-tools moveit-rviz-tools

run: setup
	@scripts/run.sh $(ARGS)

test: setup
	@scripts/run_tests.sh

# Under 2 minutes: every capability's conversions and rules, no simulator (test/fast_tier.txt).
test-fast: setup
	@scripts/run_tests.sh --durations=10 $$(grep -v '^#' test/fast_tier.txt)

# Every end-to-end file against the simulator's field profile (Wi-Fi latency, failures, noise).
test-field: setup
	@SPOT_SIM_PROFILE=field scripts/run_tests.sh $(wildcard test/test_*e2e*.py) test/test_core_field_sim.py

setup:
	@scripts/setup.sh

# ROS 2 Jazzy's C++ tools (robot_state_publisher, tf2, ros2 bag) from ../shared/vendor/ros2-cpp,
# into a prefix outside the clone (about 18 min the first time, seconds when reused or unpacked
# from a matching archive, which `make setup` does by itself), which scripts/env.sh sources
# when built (doc/setup.md). ARGS: pack [DIR], unpack FILE.
ros-tools: setup
	@scripts/ros_tools.sh $(ARGS)

# Nav2 (Jazzy) on top of ros-tools: the servers spot_driver/launch/nav2.launch.py starts and
# the plugins spot_driver/config/nav2_params.yaml names (about 35 min on 2 cores the first
# time). ARGS as for ros-tools.
nav2-tools: ros-tools
	@LAYER=nav2 scripts/ros_tools.sh $(ARGS)

# RViz (Jazzy) on top of ros-tools, Qt 5 and OGRE 1.12 from Debian: rviz2 with every default
# display (about 75 min on 2 cores the first time). ARGS as for ros-tools.
rviz-tools: ros-tools
	@LAYER=rviz scripts/ros_tools.sh $(ARGS)

# MoveIt 2 (2.12.4, Jazzy) on top of ros-tools: move_group, OMPL, KDL kinematics, the simple
# controller manager (hours on 2 cores the first time). ARGS as for ros-tools.
moveit-tools: ros-tools
	@LAYER=moveit scripts/ros_tools.sh $(ARGS)

# RViz's MotionPlanning display (moveit_ros_visualization) on rviz-tools and moveit-tools
# (about 25 min on 2 cores the first time). ARGS as for ros-tools.
moveit-rviz-tools: rviz-tools moveit-tools
	@LAYER=moveit_rviz scripts/ros_tools.sh $(ARGS)

lint: setup
	@.venv/bin/ruff check spot_common spot_driver spot_sim spot_driver_examples test scripts benchmarks doc

# spot_driver/config/spot_driver.yaml from the parameters the driver declares (config_file.py).
config: setup
	@.venv/bin/python -c "from spot_driver import registry; from spot_driver.core import config_file; \
	open('spot_driver/config/spot_driver.yaml', 'w').write(config_file.render(list(registry.SECTIONS)))"

# The documentation site (doc/, Sphinx; warnings are errors) into doc/_build/html.
docs: setup
	@.venv/bin/python -m sphinx -W --keep-going -E -b html doc doc/_build/html

bench: setup
	@scripts/run_benchmarks.sh

clean:
	rm -rf build install log .work
