"""`python -m bench [NAME...] [--list] [--write-docs]` (`make bench`): see `bench.harness`."""

import sys

from bench.catalogue import CATALOGUE
from bench.harness import main

sys.exit(main(sys.argv[1:], CATALOGUE))
