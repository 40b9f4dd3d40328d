#!/usr/bin/env bash
# Builds the one-folder app (packaging/advisor.spec) into packaging/dist/advisor with the Linux desktop files
# beside it (share/, install.sh), runs the built app's self-check without a display, then prints the
# folder's size and the app's start times.
#
#   bash packaging/build.sh              # venv in packaging/.venv (made on first use)
#   ADVISOR_BUILD_VENV=/tmp/v PYTHON=python3.12 bash packaging/build.sh
#
# The build venv holds advisor's runtime dependencies and PyInstaller, never torch: advisor is installed into
# it from this tree as a regular (non-editable) package, so the build also proves the wheel carries its data.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${ADVISOR_BUILD_VENV:-$ROOT/packaging/.venv}
PYTHON=${PYTHON:-python3}
DIST=$ROOT/packaging/dist
WORK=$ROOT/packaging/build
APP=$DIST/advisor/advisor

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

if [[ ! -x $VENV/bin/python ]]; then
    echo "== creating the build venv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
echo "== installing advisor (not editable) and PyInstaller into $VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "$ROOT" "pyinstaller>=6.10"
for optional in torch onnx safetensors; do
    if "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$optional') is None)"; then
        echo "error: $optional is installed in $VENV; the packaged app is built without it" >&2
        exit 1
    fi
done

echo "== building"
started=$(now)
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN --distpath "$DIST" --workpath "$WORK" \
    "$ROOT/packaging/advisor.spec"
echo "built in $(seconds "$started" "$(now)") s: $DIST/advisor"
bash "$ROOT/packaging/linux/stage.sh" "$DIST/advisor"  # share/ (menu entry, icons, metainfo) and install.sh

echo "== self-check of the built app (no display)"
started=$(now)
env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$APP" --self-check
echo "self-check took $(seconds "$started" "$(now)") s (wall clock, process start to exit)"

echo "== start time (offscreen, a fresh user folder: the first start seeds the catalog)"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for run in first second; do
    started=$(now)
    XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data XDG_CACHE_HOME=$home/cache QT_QPA_PLATFORM=offscreen \
        env -u ADVISOR_CATALOG "$APP" gui --startup-time
    echo "$run start: $(seconds "$started" "$(now)") s from launch to exit, the first window drawn"
done

echo "== size"
du -sh "$DIST/advisor"
echo "$(find "$DIST/advisor" -type f | wc -l) files; as a .tar.gz: $(tar -C "$DIST" -czf - advisor | wc -c | \
    awk '{ printf "%.0f MB", $1 / 1e6 }')"
