#!/usr/bin/env bash
# The whole check: lint, types, the layering contract, then the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen
.venv/bin/ruff check advisor tests benchmarks
.venv/bin/ruff format --check advisor tests benchmarks scripts
.venv/bin/mypy
.venv/bin/lint-imports
.venv/bin/python -m pytest -q -n 2 "$@"
