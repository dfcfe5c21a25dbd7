"""Pages written from the code when the docs build starts (``generated/``, not in git): a
reference page per capability with its launch switch, nodes, parameters, interfaces (its
section of the docs), health, simulator side and tests (from the driver's registry, the docs,
the simulator's folders and the test files), a reference page per folder of the simulated
robot (its services and their RPCs, modules and tests),
every launch file's arguments (from the files themselves), the examples package's README and
the README's getting-started part.
So these tables cannot drift from what the driver does."""

import ast
import importlib.util
import re
import shutil
from functools import partial
from pathlib import Path

from spot_driver import registry
from spot_driver.core.capability import Capability

# the repository of the source tree the driver runs from (spot_driver/spot_driver/registry.py)
REPO = Path(registry.__file__).resolve().parents[2]
LAUNCH_PACKAGES = ("spot_driver", "spot_sim")  # the packages with launch files


def capabilities_page() -> str:
    lines = ["# Capabilities and parameters", "",
             "Each capability of the driver (`spot_driver/spot_driver/registry.py`) has a "
             "reference page, written from the registry at build time: its launch switch, nodes "
             "and parameters (with their defaults as `spot_driver/config/spot_driver.yaml` has "
             "them), what it reports to "
             "`/diagnostics`, the robot services it calls and the simulator's side of them, and "
             "the tests that prove it.", ""]
    lines += [f"- [{c.name}](capabilities/{c.name}.md): {c.summary}."
              for c in registry.CAPABILITIES]
    lines += ["", *_parameters("Connection", registry.SECTIONS[0].parameters)]
    return "\n".join(lines) + "\n"


def capability_page(capability: Capability) -> str:
    """One capability's reference page."""
    if not capability.optional:
        switch = "always on"
    else:
        state = "on" if capability.default_enabled else "off (opt-in)"
        switch = f"launch argument `{capability.launch_argument}`, default {state}"
    nodes = ", ".join(f"`{path.rsplit(':', 1)[-1]}`" for path in capability.nodes) or "none"
    lines = [f"# {capability.name}", "", f"{capability.summary}.", "",
             f"Switch: {switch}. Node classes: {nodes} (executor `{capability.executor}`). "
             f"Code: `spot_driver/spot_driver/{capability.name}/`.", ""]
    if capability.uses:
        lines += ["Uses the plain classes of: " + ", ".join(
            f"[{name}]({name}.md)" for name in capability.uses) + ".", ""]
    if capability.parameters is not None:
        lines += _parameters("Parameters", capability.parameters.parameters)
    if capability.readme:
        lines += _interfaces(capability.readme)
    if capability.health:
        lines += ["## Health", "", "Aspects it reports on `/diagnostics`: "
                  + ", ".join(f"`{aspect}`" for aspect in capability.health) + ".", ""]
    lines += _simulator(capability) + _tests(capability)
    return "\n".join(lines) + "\n"


def _demoted(match: re.Match, shift: int) -> str:
    """A heading of an embedded section, under the page's "Interfaces" (level 3 at least)."""
    return "#" * max(3, len(match.group(1)) + shift) + " "


def _interfaces(heading: str) -> list[str]:
    """The capability's section of the docs (topics, services, actions and how they behave),
    its links made relative to ``generated/capabilities/``; a whole page is linked instead."""
    for page in sorted((REPO / "doc").glob("*.md")):
        text = page.read_text()
        match = re.search(rf"^(#+) {re.escape(heading)}\n", text, re.M)
        if match is None:
            continue
        level = len(match.group(1))
        title = f"[{page.stem.replace('_', ' ')}](../../{page.name})"
        if level == 1:
            return ["## Interfaces", "", f"See {title}.", ""]
        end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, match.end())
        body = text[match.end():end.start() if end else len(text)].strip("\n")
        body = re.sub(r"\]\((?!https?:|#)([^)]+\.md)", r"](../../\1", body)
        body = re.sub(r"^(#+) ", partial(_demoted, shift=2 - level), body, flags=re.M)
        return ["## Interfaces", "", f"From {title}, \"{heading}\":", "", body, ""]
    return []


def _first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    text = " ".join(doc.split())
    return _cell(text.split(". ")[0].rstrip(".")) if text else ""


def _simulator(capability: Capability) -> list[str]:
    folder = REPO / "spot_sim" / "spot_sim" / capability.name
    services = sorted(folder.glob("*_service.py")) if folder.is_dir() else []
    lines = []
    if services:
        lines += ["## The simulated robot's side", "",
                  f"`spot_sim/spot_sim/{capability.name}/`, serving:", ""]
        lines += [f"- `{p.name}`: {_first_sentence(p)}" for p in services] + [""]
    if capability.unsimulated:
        lines += ["Robot services it calls that the simulator does not serve:", ""]
        lines += [f"- `{service}`: {_cell(why)}" for service, why in capability.unsimulated]
        lines += [""]
    return lines


def _tests(capability: Capability) -> list[str]:
    files = sorted((REPO / "test").glob(f"test_{capability.name}_*.py"))
    lines = ["## Tests", ""]
    lines += [f"- `{p.name}`: {_first_sentence(p)}" for p in files]
    if capability.field_test:
        lines += [f"- field profile: `{_cell(capability.field_test)}`"]
    return [*lines, ""]


def simulator_folders() -> list[Path]:
    """The simulated robot's folders (its capabilities, and ``core/``), in name order."""
    sim = REPO / "spot_sim" / "spot_sim"
    return sorted(p for p in sim.iterdir() if (p / "__init__.py").is_file())


def _served_rpcs(module) -> list[tuple[str, str, list[str], list[str]]]:
    """(directory name, gRPC service, RPCs served, RPCs answered UNIMPLEMENTED) of each
    service a simulator module declares in ``SERVICES``."""
    out = []
    for served in getattr(module, "SERVICES", ()):
        spec = served.spec
        servicers = [c for c in vars(module).values() if isinstance(c, type)
                     and c.__module__ == module.__name__ and any(
                         base.__name__.endswith("Servicer") and base.__module__.endswith(
                             "_pb2_grpc") for base in c.__mro__[1:])]
        base = next((b for c in servicers for b in c.__mro__[1:]
                     if b.__name__.endswith("Servicer") and b.__module__.endswith("_pb2_grpc")
                     and spec.type.endswith(b.__name__.removesuffix("Servicer"))), None)
        rpcs = sorted(n for n in vars(base) if n[:1].isupper()) if base is not None else []
        mine = {n for c in servicers for n in vars(c)}
        out.append((spec.name, spec.type, [r for r in rpcs if r in mine],
                    [r for r in rpcs if r not in mine]))
    return out


def simulator_page(folder: Path) -> str:
    """The reference page of one folder of the simulated robot: what it models, the services
    it serves (their RPCs, from the gRPC base classes), its modules and its tests."""
    import importlib
    package = importlib.import_module(f"spot_sim.{folder.name}")
    summary = " ".join((package.__doc__ or "").split())
    lines = [f"# spot_sim: {folder.name}", "", summary, "",
             f"Code: `spot_sim/spot_sim/{folder.name}/`.", ""]
    services = []
    for path in sorted(folder.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        name = ".".join(path.relative_to(REPO / "spot_sim").with_suffix("").parts)
        services += [(path.name, *row) for row in _served_rpcs(importlib.import_module(name))]
    if services:
        lines += ["## Services", "", "| module | directory name | gRPC service | RPCs served |"
                  " RPCs not served |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| `{module}` | `{name}` | `{kind}` | {', '.join(served) or '-'} | "
                  f"{', '.join(missing) or '-'} |"
                  for module, name, kind, served, missing in services]
        lines += ["", "An RPC not served answers UNIMPLEMENTED, as a robot without that "
                  "feature does.", ""]
    lines += ["## Modules", ""]
    lines += [f"- `{p.relative_to(folder)}`: {_first_sentence(p)}"
              for p in sorted(folder.rglob("*.py")) if p.name != "__init__.py"]
    tests = sorted((REPO / "test").glob(f"test_{folder.name}*_sim.py"))
    lines += ["", "## Tests", ""]
    lines += [f"- `{p.name}`: {_first_sentence(p)}" for p in tests] or [
        "- through the other folders' tests (no file of its own)"]
    return "\n".join(lines) + "\n"


def simulator_reference_page() -> str:
    lines = ["# The simulated robot's reference", "",
             "Each folder of `spot_sim/spot_sim/` has a page written from the code at build "
             "time: what it models, the Spot API services it serves with the RPCs each "
             "implements (read from the gRPC base classes), its modules and its tests.", ""]
    lines += [f"- [{f.name}](simulator/{f.name}.md)" for f in simulator_folders()]
    return "\n".join(lines) + "\n"


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


def launch_files() -> list[Path]:
    """Every launch file of the packages, by package."""
    return [path for package in LAUNCH_PACKAGES
            for path in sorted((REPO / package / "launch").glob("*.launch.py"))]


def launch_arguments_page() -> str:
    lines = ["# Launch arguments", "",
             "Every argument of every launch file of `spot_driver` and `spot_sim`, with its "
             "default and what it does, read from the launch files when the docs are built. "
             "Each launch file refuses an argument it does not declare, naming the closest one.",
             ""]
    for launch_file in launch_files():
        rows = [f"| `{a.name}` | {_cell(_default(a))} | {_cell(a.description)} |"
                for a in declared_arguments(launch_file)]
        package = launch_file.parent.parent.name
        lines += [f"## {launch_file.name}", "", f"`ros2 launch {package} {launch_file.name}`",
                  "", "| argument | default | what |", "| --- | --- | --- |", *rows, ""]
    return "\n".join(lines) + "\n"


def getting_started_page() -> str:
    """The README's landing part (what it is, the two commands, the five-minute tour, on a
    robot, from spot_ros2), its links made relative to ``generated/``."""
    text = (REPO / "README.md").read_text().split("\n## Documentation", 1)[0]
    text = text.replace("# spot_ros2_driver\n", "# Getting started\n", 1)
    text = text.replace("](doc/", "](../")
    text = text.replace("](spot_driver_examples/README.md)", "](examples.md)")
    return text.rstrip() + "\n"


def write(app) -> None:
    out = Path(app.srcdir) / "generated"
    out.mkdir(exist_ok=True)
    (out / "capabilities.md").write_text(capabilities_page())
    pages = out / "capabilities"
    shutil.rmtree(pages, ignore_errors=True)
    pages.mkdir()
    for capability in registry.CAPABILITIES:
        (pages / f"{capability.name}.md").write_text(capability_page(capability))
    (out / "simulator.md").write_text(simulator_reference_page())
    sim_pages = out / "simulator"
    shutil.rmtree(sim_pages, ignore_errors=True)
    sim_pages.mkdir()
    for folder in simulator_folders():
        (sim_pages / f"{folder.name}.md").write_text(simulator_page(folder))
    (out / "launch_arguments.md").write_text(launch_arguments_page())
    (out / "getting_started.md").write_text(getting_started_page())
    shutil.copyfile(REPO / "spot_driver_examples" / "README.md", out / "examples.md")


def setup(app) -> dict:
    app.connect("builder-inited", write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
