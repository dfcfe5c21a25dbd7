"""Pages written from the code when the docs build starts (``generated/``, not in git): the
capabilities with their launch switches, nodes and parameters (from the driver's registry),
and the examples package's README. So these tables cannot drift from what the driver does."""

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


def write(app) -> None:
    out = Path(app.srcdir) / "generated"
    out.mkdir(exist_ok=True)
    (out / "capabilities.md").write_text(capabilities_page())
    shutil.copyfile(REPO / "examples" / "README.md", out / "examples.md")


def setup(app) -> dict:
    app.connect("builder-inited", write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
