"""Sphinx configuration of the spot_ros2_driver documentation (``make docs``; rosdoc2 finds it
in ``doc/``). Pages are Markdown: with myst-parser when it is installed (as with rosdoc2),
else with ``_ext/markdown_source.py``."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "spot_ros2_driver"
author = "spot_ros2_driver maintainers"
root_doc = "index"
extensions = ["generated_pages"]
if importlib.util.find_spec("myst_parser") is not None:
    extensions.append("myst_parser")
else:
    extensions.append("markdown_source")
exclude_patterns = ["_build", "_ext"]
html_theme = "alabaster"
nitpicky = True
