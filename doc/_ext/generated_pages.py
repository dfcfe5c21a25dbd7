"""Pages written from the code when the docs build starts (``generated/``, not in git): the
capabilities with their launch switches, nodes and parameters (from the driver's registry),
every launch file's arguments (from the files themselves), and the examples package's README.
So these tables cannot drift from what the driver does."""

import importlib.util
import re
import shutil
from pathlib import Path

from spot_driver import registry
from spot_driver.capability import Capability

REPO = Path(registry.__file__).resolve().parents[1]  # the source tree the driver runs from


def capabilities_page() -> str:
    lines = ["# Capabilities and parameters", "",
             "Each capability of the driver (`spot_driver/registry.py`): its launch switch, its "
             "nodes, and the parameters it declares, with their defaults as "
             "`config/spot_driver.yaml` has them. Written from the registry at build time.", ""]
    lines += _parameters("Connection", registry.SECTIONS[0].parameters)
    for capability in registry.CAPABILITIES:
        lines += _capability(capability)
    return "\n".join(lines) + "\n"


def _capability(capability: Capability) -> list[str]:
    if not capability.optional:
        switch = "always on"
    else:
        state = "on" if capability.default_enabled else "off (opt-in)"
        switch = f"launch argument `{capability.launch_argument}`, default {state}"
    nodes = ", ".join(f"`{path.rsplit(':', 1)[-1]}`" for path in capability.nodes) or "none"
    lines = [f"## {capability.name}", "", f"{capability.summary}.", "",
             f"Switch: {switch}. Node classes: {nodes}.", ""]
    if capability.parameters is not None:
        lines += _parameters("Parameters", capability.parameters.parameters, level="###")
    return lines


def _parameters(title: str, parameters, level: str = "##") -> list[str]:
    rows = [f"| `{p.name}` | {_cell(p.default if p.default is not None else p.example)} | "
            f"{_cell(p.description)} |" for p in parameters]
    return [f"{level} {title}", "", "| parameter | default | what |", "| --- | --- | --- |",
            *rows, ""]


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def declared_arguments(launch_file: Path) -> list:
    """The DeclareLaunchArgument actions of a launch file, as ``ros2 launch`` would load it."""
    spec = importlib.util.spec_from_file_location(launch_file.stem.replace(".", "_"),
                                                  launch_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description().get_launch_arguments()


def _default(argument) -> str:
    from launch.substitutions import TextSubstitution
    if argument.default_value is None:
        return "(required)"
    text = "".join(s.text if isinstance(s, TextSubstitution) else s.describe()
                   for s in argument.default_value)
    text = re.sub(r"\S*/share/spot_driver/", "", text)  # the install space's path
    return f"`{text}`" if text else '`""`'


def launch_arguments_page() -> str:
    lines = ["# Launch arguments", "",
             "Every argument of every launch file of `spot_driver`, with its default and what it "
             "does, read from the launch files when the docs are built. Each launch file refuses "
             "an argument it does not declare, naming the closest one.", ""]
    for launch_file in sorted((REPO / "launch").glob("*.launch.py")):
        rows = [f"| `{a.name}` | {_cell(_default(a))} | {_cell(a.description)} |"
                for a in declared_arguments(launch_file)]
        lines += [f"## {launch_file.name}", "", "| argument | default | what |",
                  "| --- | --- | --- |", *rows, ""]
    return "\n".join(lines) + "\n"


def write(app) -> None:
    out = Path(app.srcdir) / "generated"
    out.mkdir(exist_ok=True)
    (out / "capabilities.md").write_text(capabilities_page())
    (out / "launch_arguments.md").write_text(launch_arguments_page())
    shutil.copyfile(REPO / "examples" / "README.md", out / "examples.md")


def setup(app) -> dict:
    app.connect("builder-inited", write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
