#!/usr/bin/env bash
# Sets up everything advisor needs on a fresh Debian-like machine: the system packages Qt needs to run
# (offscreen too), a CJK font so Chinese renders, poppler for PDF checks, and a virtual environment in .venv.
#   bash scripts/setup.sh          # the app
#   bash scripts/setup.sh --dev    # the app plus test tools and the CPU build of torch
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0; [ "${1:-}" = "--dev" ] && dev=1

# Qt's xcb platform plugin (a real desktop) links to the libxcb-* libraries below (checked with ldd on
# PySide6's libqxcb.so; Qt 6.5+ also asks for libxcb-cursor0); offscreen needs only the first line.
system_packages=(libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0
                 libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-render-util0 libxcb-shape0
                 libxcb-xinerama0 libxcb-randr0 libxcb-xkb1 libxcb-xfixes0 libxcb-shm0 libxcb-sync1
                 fonts-noto-cjk poppler-utils)
# the tests also start a real X server (the window under xcb) and a throw-away PostgreSQL cluster, and
# check the packaging files with shellcheck, desktop-file-validate and appstreamcli
[ "${1:-}" = "--dev" ] && system_packages+=(xvfb postgresql shellcheck desktop-file-utils appstream)
missing=()
for p in "${system_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    echo "setup: installing system packages: ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: please install these system packages yourself: ${missing[*]}" >&2
  fi
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>/dev/null || true
if [ "$dev" = 1 ]; then
  # torch 2.13.0 is the CPU build the tests use; any other version pulls a multi-GB CUDA build.
  # setuptools>=77 in the environment itself: scripts/wheel_check.sh builds without build isolation (offline)
  # --no-compile: pip would byte-compile all ~12,500 .py files of these packages up front (transformers and
  # sympy alone: 11 s of CPU, measured); Python compiles the modules the tests import when they first import them
  .venv/bin/python -m pip install -q --disable-pip-version-check "setuptools>=77" 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-compile -e ".[dev]" 2>&1 | grep -v "is ignored" || true
  # the optional packages users install, so their tests run: torch pinned to the CPU wheel by a
  # constraints file (an unpinned dependency would swap it for a multi-GB CUDA build), the newest
  # transformers, onnx, safetensors, huggingface_hub (hf:ORG/NAME), gguf (FILE.gguf), and psycopg for a
  # team catalog on PostgreSQL
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-compile -c scripts/constraints.txt "torch==2.13.0" \
    "onnx>=1.15" "safetensors>=0.4" transformers "huggingface_hub>=0.34" "gguf>=0.10" "psycopg[binary]>=3.1" 2>&1 | grep -v "is ignored" || true
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -e . 2>&1 | grep -v "is ignored" || true
fi
.venv/bin/python -c "import advisor" || { echo "setup: advisor failed to install" >&2; exit 1; }
