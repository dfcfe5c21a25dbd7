"""RViz on a virtual screen, and what its window shows: the harness of
``test_description_rviz_e2e.py``.

``virtual_screen()`` runs Xvfb (a display of its own, no TCP listener), ``grab()`` takes a
screenshot of it, and the pure functions below read a screenshot the way a person reads RViz:
the Displays panel's status colours (RViz draws an enabled display's name in blue when its
status is OK, orange on a warning, red on an error), and whether a region holds a picture or
is blank.
"""

import contextlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# rviz_common: Display::getViewData and StatusProperty::status_colors_ (rviz 14, Jazzy)
OK_BLUE = (40, 120, 197)
WARN_ORANGE = (192, 128, 0)
ERROR_RED = (192, 32, 32)
SCREEN = (1400, 900)  # RViz 2's default window, whole


@contextlib.contextmanager
def virtual_screen(size: tuple[int, int] = SCREEN):
    """An Xvfb display (``":N"``) for the duration: unix socket only, 24-bit colour."""
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is not installed"
    number = next(n for n in range(90, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists()
                  and not Path(f"/tmp/.X{n}-lock").exists())
    process = subprocess.Popen(
        [xvfb, f":{number}", "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp",
         "-noreset"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    socket = Path(f"/tmp/.X11-unix/X{number}")
    deadline = time.monotonic() + 10
    while not socket.exists():
        assert process.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.05)
    try:
        yield f":{number}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def grab(display: str) -> np.ndarray:
    """The whole screen of ``display`` as an RGB array (rows, cols, 3)."""
    from PIL import ImageGrab
    return np.asarray(ImageGrab.grab(xdisplay=display).convert("RGB"))


def near(pixels: np.ndarray, colour: tuple[int, int, int], tolerance: int = 40) -> np.ndarray:
    """Which pixels are within ``tolerance`` of ``colour`` on every channel."""
    return np.all(np.abs(pixels.astype(np.int16) - np.array(colour)) <= tolerance, axis=-1)


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    right: int
    bottom: int

    def of(self, screen: np.ndarray) -> np.ndarray:
        return screen[self.top:self.bottom, self.left:self.right]


def status_pixels(panel: np.ndarray) -> dict[str, int]:
    """How many pixels of the Displays panel are drawn in each status colour (names and
    status icons)."""
    return {"ok": int(near(panel, OK_BLUE, 30).sum()),
            "warn": int(near(panel, WARN_ORANGE, 30).sum()),
            "error": int(near(panel, ERROR_RED, 30).sum())}


def blank(region: np.ndarray) -> bool:
    """Whether a region is one flat colour (nothing drawn): fewer than 1 % of its pixels
    differ from its most common colour by more than a little."""
    flat = region.reshape(-1, 3).astype(np.int16)
    values, counts = np.unique(flat, axis=0, return_counts=True)
    common = values[counts.argmax()]
    differ = np.any(np.abs(flat - common) > 12, axis=-1).mean()
    return bool(differ < 0.01)


def coloured(region: np.ndarray, saturation: int = 120) -> int:
    """How many pixels are strongly coloured and not the robot's yellow (max - min channel
    above ``saturation``, blue or green above red or red well above green): the clouds' axis
    colours. RViz's grid and background are grey."""
    c = region.astype(np.int16)
    strong = (c.max(axis=-1) - c.min(axis=-1)) > saturation
    yellow = (c[..., 0] > 120) & (c[..., 1] > 0.55 * c[..., 0]) & (c[..., 2] < 0.5 * c[..., 1])
    return int((strong & ~yellow).sum())


def yellow(region: np.ndarray) -> int:
    """How many pixels are the robot model's yellow (the URDF's body and legs, shaded)."""
    c = region.astype(np.int16)
    return int(((c[..., 0] > 100) & (c[..., 1] > 0.55 * c[..., 0]) & (c[..., 1] < 0.95 * c[..., 0])
                & (c[..., 2] < 0.45 * c[..., 1])).sum())


def native_windows(display: str) -> list[Box]:
    """RViz's native child windows, largest first: OGRE renders the 3D view and each image
    panel in a window of its own (the Qt widgets are not X windows). ``xwininfo -tree``
    gives each window's size and absolute place (``WxH+x+y  +X+Y``)."""
    out = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True,
                         check=True, env={**os.environ, "DISPLAY": display}).stdout
    boxes = set()
    for line in out.splitlines():
        if '"rviz2": ("rviz2" "rviz2")' not in line:
            continue
        size, absolute = line.split()[-2:]
        width, height = (int(v) for v in size.split("+")[0].split("x"))
        x, y = (int(v) for v in absolute.lstrip("+").split("+"))
        if width > 50 and height > 50:
            boxes.add(Box(x, y, x + width, y + height))
    return sorted(boxes, key=lambda b: (b.right - b.left) * (b.bottom - b.top), reverse=True)
