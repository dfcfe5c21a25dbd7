"""Fix the ROS wheels' CMake exports for building against them here. Idempotent.

- The ``*__rosidl_generator_pyExport.cmake`` files name the include directories of the
  machine that built them (``/opt/python/cp311-cp311/...``); CMake rejects the imported
  targets until they name this interpreter's and numpy's include directories.
- Fast DDS's exported target links the builder's ``/usr/lib64/libtinyxml2.so`` ("No rule to
  make target"); ``libfastrtps.so`` carries its own tinyxml2, so that entry is dropped.
"""

import re
import sys
import sysconfig
from pathlib import Path

import numpy

_PATTERN = re.compile(r'(INTERFACE_INCLUDE_DIRECTORIES\s+")([^"]*)(")')


def fix(prefix: Path) -> int:
    wanted = f"{sysconfig.get_paths()['include']};{numpy.get_include()}"
    changed = 0
    for path in (prefix / "share").glob("*/cmake/*__rosidl_generator_pyExport.cmake"):
        text = path.read_text()
        new = _PATTERN.sub(lambda m: m.group(1) + wanted + m.group(3)
                           if "python3" in m.group(2) else m.group(0), text)
        if new != text:
            path.write_text(new)
            changed += 1
    fastrtps = prefix / "share" / "fastrtps" / "cmake" / "fastrtps-shared-targets.cmake"
    if fastrtps.is_file():
        text = fastrtps.read_text()
        new = re.sub(r";/usr/lib64/[^;\"]*", "", text)
        if new != text:
            fastrtps.write_text(new)
            changed += 1
    return changed


if __name__ == "__main__":
    print(f"fixed {fix(Path(sys.argv[1]))} CMake export files")
