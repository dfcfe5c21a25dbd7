"""What a launch needs to run its processes in a network mode: per-process Fast DDS profiles,
their environment, and the discovery server's command line (no ROS imports: launch files and
tests use it)."""

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from spot_driver.network import ports, profiles

SERVER = "fast-discovery-server"


@dataclass(frozen=True)
class Deployment:
    """The processes of one launch in ``plan.mode``; files are written under ``directory``."""

    plan: ports.PortPlan
    directory: Path
    remote_commands: bool = True  # False: command interfaces only reachable on the payload
    namespace: str = ""  # the robot's namespace (its command topics)
    image_mbit: float = 0.0  # image writers' bandwidth (Mbit/s, all together); 0: not limited

    @property
    def local(self) -> bool:
        return self.plan.mode == "local"

    def environment(self, index: int) -> dict[str, str]:
        """Environment of the launch's ``index``-th ROS process (empty in local mode: the
        caller's environment, e.g. scripts/env.sh's shared-memory profile, stands)."""
        if self.local:
            return {}
        commands = None if self.remote_commands else self.namespace
        path = self._write(f"payload_{index}.xml",
                           profiles.payload(self.plan, index, commands, self.namespace,
                                            self.image_mbit))
        return {**variables(Path(path), self.plan.domain_id),
                "ROS_DISCOVERY_SERVER": "", "ROS_STATIC_PEERS": "",
                # rmw keeps each writer profile's publish mode (the image writers' flow control)
                "RMW_FASTRTPS_PUBLICATION_MODE": "AUTO"}

    def server_command(self) -> tuple[list[str], dict[str, str]]:
        """The discovery server's command line and extra environment."""
        executable = shutil.which(SERVER) or shutil.which(SERVER, path=str(
            Path(sys.executable).parent))
        if executable is None:
            raise ports.NetworkConfigError(
                f"network:={self.plan.mode} needs Fast DDS's {SERVER} (apt: ros-<distro>-fastrtps; "
                f"pip: the ros-<distro>-fastrtps wheel)")
        path = self._write("discovery_server.xml", profiles.server(self.plan))
        return [executable, "-x", path], {"LD_LIBRARY_PATH": _library_path(executable)}

    def _write(self, name: str, text: str) -> str:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / name
        path.write_text(text)
        return str(path)


def variables(profile: Path, domain: int | str) -> dict[str, str]:
    """The environment of a process whose DDS setup is ``profile``: the XML decides transports
    and discovery, not localhost-only settings (an inherited deprecated ROS_LOCALHOST_ONLY is
    emptied: rcl warns when it is set to anything, 0 included)."""
    return {"FASTRTPS_DEFAULT_PROFILES_FILE": str(profile),
            "FASTDDS_DEFAULT_PROFILES_FILE": str(profile),
            "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT", "ROS_LOCALHOST_ONLY": "",
            "ROS_DOMAIN_ID": str(domain)}


def deployment(mode: str, robot_ip: str, discovery_port: int, processes: int,
               directory: str | None = None, remote_commands: bool = True,
               namespace: str = "", image_mbit: float = 0.0) -> Deployment:
    """A checked deployment (``ports.NetworkConfigError`` names what cannot work)."""
    domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    plan = ports.plan(mode, robot_ip, domain, discovery_port, processes)
    where = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="spot_dds_"))
    if not 0 <= image_mbit <= 10_000:
        raise ports.NetworkConfigError(f"image_bandwidth must be 0 (no limit) to 10000 Mbit/s, "
                                       f"not {image_mbit}")
    return Deployment(plan, where, remote_commands, namespace, image_mbit)


def _library_path(executable: str) -> str:
    """The wheel's server has no usable RPATH: its libraries sit in <venv>/lib and the rmw
    wheel's .libs folder. Harmless where they do not exist (an apt install)."""
    prefix = Path(executable).resolve().parent.parent
    extra = [prefix / "lib", *sorted((prefix / "lib").glob(
        "python3*/site-packages/ros_rmw_fastrtps_cpp.libs"))]
    existing = os.environ.get("LD_LIBRARY_PATH", "")
    return os.pathsep.join([str(p) for p in extra if p.is_dir()] + ([existing] if existing else []))
