#!/usr/bin/env bash
# Builds the wheel and the sdist of the gpu-advisor distribution, installs the wheel into a clean virtual
# environment and runs `advisor --self-check` from there, outside the checkout, so that only what the wheel
# carries (the package, its data files, the `advisor` command) is found.
#   bash scripts/wheel_check.sh [PYTHON]      # PYTHON: the dev environment's (default .venv/bin/python)
# Offline and fast: the wheel goes in with --no-deps, and the clean environment reaches the dependencies
# (PySide6, matplotlib, SQLAlchemy...) already installed in the dev environment through a .pth line. A path
# line in a .pth file adds that directory to sys.path without running the .pth files inside it, so the dev
# environment's editable install of advisor stays out and `import advisor` is the wheel's.
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(cd "$(dirname "${1:-.venv/bin/python}")" && pwd)/$(basename "${1:-.venv/bin/python}")  # not realpath: a venv python is a symlink
work=$(mktemp -d "${TMPDIR:-/tmp}/advisor-wheel-XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s.%N)

"$python" -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" . 2>&1 | grep -v "is ignored" || true
"$python" -c "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])" "$work/dist" \
  >/dev/null 2>&1
wheel=$(ls "$work"/dist/gpu_advisor-*.whl)
sdist=$(ls "$work"/dist/gpu_advisor-*.tar.gz)
unzip -l "$wheel" > "$work/wheel.txt"  # listed to files: grep -q would close a pipe that pipefail reports
tar tzf "$sdist" > "$work/sdist.txt"
for member in advisor/data/cards.csv advisor/py.typed advisor/cli.py; do
  grep -q " $member\$" "$work/wheel.txt" || { echo "wheel_check: $member missing from $wheel" >&2; exit 1; }
  grep -q "/$member\$" "$work/sdist.txt" || { echo "wheel_check: $member missing from $sdist" >&2; exit 1; }
done

"$python" -m venv --without-pip "$work/venv"
"$python" -m pip --python "$work/venv/bin/python" install -q --no-deps --no-index "$wheel" 2>&1 | grep -v "is ignored" || true
site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$site/dev-dependencies.pth"

cd "$work"  # not the checkout: nothing of it may be found
env -u PYTHONPATH "$work/venv/bin/python" -c "import advisor, sys; from pathlib import Path
assert Path(advisor.__file__).is_relative_to(Path(sys.prefix)), advisor.__file__"
env -u PYTHONPATH "$work/venv/bin/advisor" --self-check
printf 'wheel_check: %s and %s built, installed and self-checked in %.1f s\n' "$(basename "$wheel")" \
  "$(basename "$sdist")" "$(echo "$(date +%s.%N) - $started" | bc)"
