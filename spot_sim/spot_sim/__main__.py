import sys

from spot_sim.cli import main

if __name__ == "__main__":  # not when a render worker (spawned) imports it as __mp_main__
    sys.exit(main())
