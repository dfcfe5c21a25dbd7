"""spot_driver_examples: short rclpy programs that drive Spot through spot_driver."""

from setuptools import setup

PACKAGE = "spot_driver_examples"
PROGRAMS = ("walk_forward", "spot_in_circle", "hello_spot", "arm_simple", "batch_trajectory",
            "send_inverse_kinematics_requests", "arm_with_body_follow", "nogo_example",
            "simple_sub", "wasd", "noarm_squat", "wiggle_arm", "set_gripper_gains",
            "mixed_level_example", "joint_command_passthrough")

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[PACKAGE],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml", "README.md"]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="spot_ros2_driver maintainers",
    maintainer_email="maintainers@spot-ros2-driver.invalid",
    description="Examples of driving Spot through spot_driver",
    license="Apache-2.0",
    entry_points={"console_scripts": [f"{name} = {PACKAGE}.{name}:main" for name in PROGRAMS]},
)
