"""What a capability declares, and what its nodes are given.

A capability (``spot_driver/<name>/``) declares itself once, in its ``__init__.py``, as a
``Capability``: its nodes (by import path, so launch files can read the registry without
importing ROS nodes), the executor they spin in, the SDK clients it needs registered, and the
parameters it reads (a ``Section`` of ``config/spot_driver.yaml``, which is rendered from these
declarations). ``registry.py`` lists them;
``main.py``, the launch files, the connection and the diagnostics read that list.

This module imports nothing from ROS or the SDK.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module

# Executors of the driver process and their threads: cmd_vel, stop and e-stop never wait
# behind slow calls; GraphNav, local grids and choreography keep their many services out of
# the busy main executor's wait set.
EXECUTORS = {"motion": 2, "main": 8, "autonomy": 4}


def load(path: str):
    """The object named ``"package.module:Name"``."""
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Parameter:
    """One ROS parameter of the driver as ``config/spot_driver.yaml`` shows it: its default
    there and its description (what ``ros2 param describe`` says). A parameter without a
    default (``None``) is optional and shown commented out with ``example``."""

    name: str
    default: object
    description: str
    example: str = ""


@dataclass(frozen=True)
class Section:
    """The parameters one capability (or the connection) reads, under ``heading`` in the
    config file."""

    heading: str
    parameters: tuple[Parameter, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)


@dataclass(frozen=True)
class Capability:
    """One capability of the driver.

    ``optional`` capabilities can be switched off: parameter ``enable_<name>``, launch
    argument ``<name>``; ``default_enabled=False`` ones (opt-in) are off unless switched on.
    ``nodes`` are ``"module:Class"`` paths of ROS nodes whose constructor takes a
    ``DriverContext``. ``sdk_clients`` are ``"module:Class"`` paths of
    SDK clients that ``create_standard_sdk`` does not register by itself. ``uses`` names the
    other optional capabilities whose plain classes this one imports (their nodes need not
    run); a capability imports the core and these, nothing else.

    The recipe's other places, checked by ``test/test_layout_recipe_units.py``: ``readme`` is
    the heading of its interface section in doc/driver.md; ``health`` the ``/diagnostics``
    aspects its nodes report (``spot_driver: <aspect>...``); ``field_test`` a test of it in
    ``test/field_pass.txt`` (or, after "none: ", why the field profile cannot matter to it);
    ``unsimulated`` the robot services it calls that the simulator does not serve, each with
    the reason.
    """

    name: str
    summary: str
    nodes: tuple[str, ...]
    executor: str = "main"
    optional: bool = True
    default_enabled: bool = True  # optional ones only: on unless switched off
    sdk_clients: tuple[str, ...] = ()
    parameters: Section | None = None
    uses: tuple[str, ...] = ()
    readme: str = ""
    health: tuple[str, ...] = ()
    field_test: str = ""
    unsimulated: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ValueError(f"capability {self.name!r}: unknown executor {self.executor!r}")

    @property
    def launch_argument(self) -> str:
        return self.name


@dataclass
class DriverContext:
    """What every node of the driver process shares: the one robot connection and state
    cache, the commander (lease-carrying body commands), the supervisor, the namespace, and
    what nodes offer each other (streams and health checks for the diagnostics)."""

    connection: object
    cache: object
    commander: object
    supervisor: object
    namespace: str = ""
    streams: list[Callable] = field(default_factory=list)  # () -> acquisition.Stream list
    health: list[Callable] = field(default_factory=list)  # (prefix, hardware_id) -> status
