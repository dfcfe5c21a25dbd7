"""spot_common: what spot_driver and spot_sim share (recorders, strict launch arguments)."""

from setuptools import setup

PACKAGE = "spot_common"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[PACKAGE],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="spot_ros2_driver maintainers",
    maintainer_email="maintainers@spot-ros2-driver.invalid",
    description="What spot_driver and spot_sim share: recorders and strict launch arguments",
    license="Apache-2.0",
)
