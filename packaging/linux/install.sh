#!/usr/bin/env bash
# Installs the packaged advisor for the current user, no root needed: the app folder, the `advisor` command,
# the menu entry, its icon and the AppStream metadata. packaging/build.sh copies this script and share/ into
# the built folder; run it from there (or from the unpacked archive):
#
#   ./install.sh              # into ~/.local (PREFIX=... and XDG_DATA_HOME=... to change)
#   ./install.sh --uninstall  # removes what it installed; your catalog and settings stay
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
APP_ID=io.github.advisor.Advisor
TARGET=$PREFIX/lib/advisor
ICON_SIZES="16 24 32 48 64 128 256 512"

refresh() {  # menus and icon caches pick the change up sooner; both tools are optional
    if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$DATA/applications" || true; fi
    if command -v gtk-update-icon-cache >/dev/null; then gtk-update-icon-cache -q -t "$DATA/icons/hicolor" || true; fi
}

if [[ ${1:-} == --uninstall ]]; then
    rm -rf "$TARGET"
    rm -f "$PREFIX/bin/advisor" "$DATA/applications/$APP_ID.desktop" "$DATA/metainfo/$APP_ID.metainfo.xml"
    for size in $ICON_SIZES; do rm -f "$DATA/icons/hicolor/${size}x${size}/apps/$APP_ID.png"; done
    rm -f "$DATA/icons/hicolor/scalable/apps/$APP_ID.svg"
    refresh
    echo "advisor uninstalled from $PREFIX"
    exit 0
fi
if [[ ! -x $HERE/advisor || ! -d $HERE/share ]]; then
    echo "error: run install.sh from the built advisor folder (packaging/dist/advisor), beside advisor and share/" >&2
    exit 2
fi

if [[ $HERE != "$TARGET" ]]; then
    rm -rf "$TARGET"
    mkdir -p "$TARGET"
    cp -a "$HERE/." "$TARGET/"
fi
mkdir -p "$PREFIX/bin" "$DATA/applications" "$DATA/metainfo" "$DATA/icons/hicolor/scalable/apps"
ln -sfn "$TARGET/advisor" "$PREFIX/bin/advisor"
# The menu entry runs the installed binary by its full path: ~/.local/bin is not on every desktop's PATH.
sed -e "s|^Exec=advisor|Exec=$TARGET/advisor|" -e "s|^TryExec=advisor|TryExec=$TARGET/advisor|" \
    "$HERE/share/applications/$APP_ID.desktop" > "$DATA/applications/$APP_ID.desktop"
cp "$HERE/share/metainfo/$APP_ID.metainfo.xml" "$DATA/metainfo/"
cp "$HERE/share/icons/hicolor/scalable/apps/$APP_ID.svg" "$DATA/icons/hicolor/scalable/apps/"
for size in $ICON_SIZES; do
    mkdir -p "$DATA/icons/hicolor/${size}x${size}/apps"
    cp "$HERE/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png" "$DATA/icons/hicolor/${size}x${size}/apps/"
done
refresh
echo "advisor installed in $TARGET; menu entry $DATA/applications/$APP_ID.desktop; command $PREFIX/bin/advisor"
