"""`python -m flopscope.tui.cli` goes in as the `flopscope` command does."""

import sys

from .entry import main

sys.exit(main())
