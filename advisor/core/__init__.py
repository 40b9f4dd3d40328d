"""Pure-Python estimation engine: layer IR, per-op formulas, the memory timeline of one step.

Nothing here imports Qt, torch, SQLAlchemy or NVML (checked by the import-linter contract in pyproject.toml
and by tests/core/test_layering.py).
"""
