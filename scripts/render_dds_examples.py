"""Write spot_driver/config/dds/'s example Fast DDS profiles from the driver's
network/profiles.py
(``test/test_network_units.py`` fails when they are stale).

    python scripts/render_dds_examples.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "spot_driver"))  # the spot_driver package's folder

from spot_driver.network.profiles import examples  # noqa: E402

for name, text in examples().items():
    (ROOT / "spot_driver" / "config" / "dds" / name).write_text(text)
    print(f"spot_driver/config/dds/{name}")
