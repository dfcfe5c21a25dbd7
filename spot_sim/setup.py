"""spot_sim: a simulated Spot speaking the real Spot API, for spot_driver and the SDK."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "spot_sim"

setup(
    name=PACKAGE,
    version="0.1.0",
    # Found, not listed: a capability's new sub-package is installed without touching this file.
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={"": ["*.yaml"]},  # e.g. spot_sim/choreography/moves.yaml
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="spot_ros2_driver maintainers",
    maintainer_email="maintainers@spot-ros2-driver.invalid",
    description="A simulated Boston Dynamics Spot speaking the real Spot API over TLS",
    license="Apache-2.0",
    entry_points={"console_scripts": ["spot-sim = spot_sim.cli:main"]},
)
