"""``python -m minibert ...`` runs the command line (see ``minibert.cli``)."""

import sys

from minibert.cli import main

sys.exit(main())
