"""The Textual app: App classes, screens, widgets and app.tcss."""
