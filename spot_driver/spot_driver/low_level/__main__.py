import sys

from spot_driver.low_level.process import main

sys.exit(main())
