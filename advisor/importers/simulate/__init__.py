"""Simulated estimates: run the real module's step on the meta device with CUDA semantics and count every
byte (DESIGN.md, "Two ways to estimate"). Needs torch; import lazily from code that must work without it."""

from advisor.importers.simulate.loader import LoadedPyModel, load_py_model
from advisor.importers.simulate.result import simulate_estimate

__all__ = ["LoadedPyModel", "load_py_model", "simulate_estimate"]
