import sys

from qhybrid.cli import main

sys.exit(main())
