#!/usr/bin/env bash
# Copies the Linux desktop integration into a built app folder: share/ (menu entry, icons, AppStream
# metadata, laid out as under /usr/share) and install.sh. packaging/build.sh calls it:
#
#   bash packaging/linux/stage.sh packaging/dist/advisor
set -euo pipefail
APP_ID=io.github.advisor.Advisor
PACKAGING=$(cd "$(dirname "$0")/.." && pwd)
DEST=${1:?usage: stage.sh APP_FOLDER}
SHARE=$DEST/share

mkdir -p "$SHARE/applications" "$SHARE/metainfo" "$SHARE/icons/hicolor/scalable/apps"
cp "$PACKAGING/linux/$APP_ID.desktop" "$SHARE/applications/"
cp "$PACKAGING/linux/$APP_ID.metainfo.xml" "$SHARE/metainfo/"
cp "$PACKAGING/icons/$APP_ID.svg" "$SHARE/icons/hicolor/scalable/apps/"
cp -R "$PACKAGING/icons/hicolor/." "$SHARE/icons/hicolor/"
cp "$PACKAGING/linux/install.sh" "$DEST/"
