"""Rasterizes io.github.advisor.Advisor.svg into the PNG sizes of the freedesktop hicolor theme, plus the
Windows .ico and macOS .icns that packaging/advisor.spec uses. Qt's own SVG renderer (PySide6.QtSvg, part
of PySide6-Essentials), so no new dependency:

    .venv/bin/python packaging/icons/make_icons.py

Writes packaging/icons/hicolor/<N>x<N>/apps/io.github.advisor.Advisor.png, advisor.ico and advisor.icns.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_ID = "io.github.advisor.Advisor"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
HERE = Path(__file__).resolve().parent


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(HERE / f"{APP_ID}.svg"))
    if not renderer.isValid():
        print(f"error: cannot read {APP_ID}.svg", file=sys.stderr)
        return 1

    def render(size: int) -> QImage:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        return image

    for size in SIZES:
        target = HERE / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not render(size).save(str(target), "PNG"):
            print(f"error: cannot write {target}", file=sys.stderr)
            return 1
        print(target.relative_to(HERE))
    for name, size, kind in (("advisor.ico", 256, "ICO"), ("advisor.icns", 512, "ICNS")):
        if not render(size).save(str(HERE / name), kind):
            print(f"error: cannot write {name}", file=sys.stderr)
            return 1
        print(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
