import sys

from spot_driver.main import main

sys.exit(main())
