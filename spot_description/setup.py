"""spot_description: Spot's robot model as data (no Python module), found by the ament index."""

from glob import glob

from setuptools import setup

PACKAGE = "spot_description"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/urdf", glob("urdf/*")),
        (f"share/{PACKAGE}/srdf", glob("srdf/*")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="spot_ros2_driver maintainers",
    maintainer_email="maintainers@spot-ros2-driver.invalid",
    description="Boston Dynamics Spot's robot model: URDF, geometry and SRDF",
    license="Apache-2.0",
)
