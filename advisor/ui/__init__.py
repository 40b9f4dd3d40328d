"""The desktop app's widgets (PySide6). Widgets show the state of a model; they hold none."""
