"""The desktop app (PySide6). Widgets are named Qt<Thing> and mirror state held in plain model objects
(state.py, draft.py); long work runs on worker threads (workers.py). Nothing outside this package imports Qt.
"""
