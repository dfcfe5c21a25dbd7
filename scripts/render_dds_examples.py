"""Write config/dds/'s example Fast DDS profiles from spot_driver/network/profiles.py
(``test/test_network_units.py`` fails when they are stale).

    python scripts/render_dds_examples.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spot_driver.network.profiles import examples  # noqa: E402

for name, text in examples().items():
    (ROOT / "config" / "dds" / name).write_text(text)
    print(f"config/dds/{name}")
