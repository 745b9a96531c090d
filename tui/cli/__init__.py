"""The `flopscope` command: argparse and rich, no Textual at import (the app loads only inside the
function that opens it). `entry.main` is the console script; `main.main` parses and dispatches."""
