"""Making a file or folder read-only in a test, also as root (which ignores modes)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.catalog import add_price, list_cards, open_catalog
from advisor.catalog.bundled import BundledData
from advisor.catalog.errors import CatalogFileError


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """chmod for a normal user; root ignores modes, so it needs the immutable attribute (chattr +i)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr: no way to make a file read-only")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def reads_and_refuses_writes(db_path: Path, bundled: BundledData) -> None:
    """Opens the catalog (made read-only by the caller): every bundled card is listed, a write is one error."""
    catalog = open_catalog(db_path, bundled=bundled)
    with catalog.read() as session:
        assert len(list_cards(session)) == len(bundled.cards)
    with pytest.raises(CatalogFileError, match="readonly database"):
        catalog.transact(lambda s: add_price(s, "4090", 999.0))
    catalog.close()
