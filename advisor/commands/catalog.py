"""Placeholder replaced by the catalog branch."""
from typing import Any


def register(sub: Any) -> None:
    pass
