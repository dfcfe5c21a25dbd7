"""A tool's configuration rendered for one robot and written where the tool can read it (RViz
and Nav2 take a file path, not text)."""

import os
import tempfile
from collections.abc import Callable


def rendered_file(template: str, render: Callable[[str, str], str], prefix: str,
                  suffix: str) -> str:
    """``render(template's text, prefix)`` in a new temporary file; its path."""
    with open(template) as source:
        text = render(source.read(), prefix)
    handle, path = tempfile.mkstemp(prefix="spot_", suffix=suffix)
    with os.fdopen(handle, "w") as out:
        out.write(text)
    return path
