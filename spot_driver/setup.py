"""spot_driver: the ROS 2 driver for Boston Dynamics Spot."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "spot_driver"

setup(
    name=PACKAGE,
    version="0.1.0",
    # Found, not listed: a capability's new sub-package is installed without touching this file.
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.xml")),
        (f"share/{PACKAGE}/config/moveit", glob("config/moveit/*")),
        (f"share/{PACKAGE}/config/dds", glob("config/dds/*")),
        (f"share/{PACKAGE}/rviz", glob("rviz/*.rviz")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="spot_ros2_driver maintainers",
    maintainer_email="maintainers@spot-ros2-driver.invalid",
    description="ROS 2 driver for the Boston Dynamics Spot robot",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "spot_driver = spot_driver.main:main",
            "spot_low_level = spot_driver.low_level.process:main",
            "spot-operator-env = spot_driver.network.operator:main",
        ],
    },
)
