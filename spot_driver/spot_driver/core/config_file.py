"""``config/spot_driver.yaml``, rendered from the parameters the driver declares.

Every parameter is declared once, with its default and description, in a ``Section``: the
connection's in ``driver_parameters.py``, each capability's in its ``Capability``. The file
is this module's rendering of them (``make config`` writes it; a test checks it is current),
and ``ros2 param describe`` shows the same descriptions.
"""

import json
import textwrap

from spot_driver.core.capability import Parameter, Section

WIDTH = 100
COMMENT_COLUMN = 34
MIN_COMMENT = 30  # columns a description beside its setting needs at least
HEADER = """\
# Parameters of the spot_driver process. The wildcard applies them to every node of the
# driver, whatever namespace it runs in. Each section belongs to one capability (or to the
# connection); ros2 param describe shows the same descriptions.
# Credentials are NOT parameters: set BOSDYN_CLIENT_USERNAME / BOSDYN_CLIENT_PASSWORD, or
# name a file (KEY=VALUE lines: username=..., password=...; chmod 600) in credentials_file.
# Rendered from the declarations (spot_driver/core/config_file.py): edit those, then make config.
/**:
  ros__parameters:
"""


def yaml_value(value) -> str:
    """``value`` as a YAML flow scalar or list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    return repr(value)


def parameter_lines(parameter: Parameter) -> list[str]:
    """The parameter's line(s): ``name: default  # description``, the description wrapped
    under its first line; an optional one commented out with its example."""
    if parameter.default is None:
        setting = f"    # {parameter.name}: {parameter.example}"
    else:
        setting = f"    {parameter.name}: {yaml_value(parameter.default)}"
    column = max(COMMENT_COLUMN, len(setting) + 2)
    if column > WIDTH - MIN_COMMENT:  # a long default: the description above it
        above = textwrap.wrap(parameter.description, WIDTH - 6, break_on_hyphens=False)
        return [f"    # {line}" for line in above] + [setting]
    lines = textwrap.wrap(parameter.description, WIDTH - column - 2,
                          break_on_hyphens=False) or [""]
    out = [f"{setting.ljust(column)}# {lines[0]}".rstrip()]
    out += [f"{' ' * column}# {line}" for line in lines[1:]]
    return out


def render(sections: list[Section]) -> str:
    """The whole config file for ``sections``, in order."""
    blocks = []
    for section in sections:
        lines = [f"    # --- {section.heading} ---"]
        for parameter in section.parameters:
            lines += parameter_lines(parameter)
        blocks.append("\n".join(lines))
    return HEADER + "\n\n".join(blocks) + "\n"
