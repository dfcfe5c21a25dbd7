import sys

from spot_sim.cli import main

sys.exit(main())
