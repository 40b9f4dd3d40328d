"""docs/ARCHITECTURE.md's layer list is the import-linter layers contract of pyproject.toml, and names every
top-level module of the package: a layer added, moved or renamed in one place fails here until the other
says the same."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def documented_layers() -> list[str]:
    """The first column of the fenced block between the layers markers, one layer line each."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- layers:.*?-->\s*```\n(.*?)```\s*<!-- /layers -->", text, re.S)
    assert block, "docs/ARCHITECTURE.md has no <!-- layers --> block"
    # a layer line is its modules joined by " | " or " : ", then two or more spaces, then what it does
    return [re.split(r"\s{2,}", line.strip())[0] for line in block.group(1).splitlines() if line.strip()]


def contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c for c in contracts if c["type"] == "layers"]
    assert layers["containers"] == ["advisor"] and layers["exhaustive"]
    return list(layers["layers"])


def test_the_documented_layers_are_the_contract() -> None:
    documented = documented_layers()
    assert documented[0] == "__main__" and documented[-1] == "core"  # the block was read, top to bottom
    assert documented == contract_layers()


def test_every_top_level_module_has_a_layer() -> None:
    named = {m for line in contract_layers() for m in re.split(r"\s*[|:]\s*", line)}
    package = ROOT / "advisor"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    modules -= {"data"}  # bundled data files, no code
    assert modules == named
