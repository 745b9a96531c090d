"""What the CLI and the app both show, as text and table models: no Textual here, so `--no-tui` and
the app never disagree."""
