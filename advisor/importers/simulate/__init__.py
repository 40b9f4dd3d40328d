"""Simulated estimates: run the real module's step on the meta device with CUDA semantics and count every
byte (DESIGN.md, "Two ways to estimate"). Needs torch; import lazily from code that must work without it."""

from advisor.importers.simulate.result import simulate_estimate

__all__ = ["simulate_estimate"]
