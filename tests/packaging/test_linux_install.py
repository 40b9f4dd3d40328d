"""packaging/linux: stage.sh lays the desktop files beside a built app, install.sh installs that folder for
the user (menu entry pointing at the installed binary, icons, metainfo) and --uninstall removes it all.
A stand-in `advisor` executable replaces the PyInstaller build, which is too slow for the test suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP_ID = "io.github.advisor.Advisor"


def bash(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", *map(str, args)], capture_output=True, text=True, timeout=60, env=env)


def test_stage_install_and_uninstall(tmp_path: Path) -> None:
    app = tmp_path / "dist" / "advisor"
    (app / "_internal").mkdir(parents=True)
    (app / "advisor").write_text("#!/bin/sh\necho advisor-ran\n")
    (app / "advisor").chmod(0o755)
    staged = bash(REPO / "packaging" / "linux" / "stage.sh", app)
    assert staged.returncode == 0, staged.stderr
    share = app / "share"
    assert (share / "applications" / f"{APP_ID}.desktop").is_file()
    assert (share / "icons" / "hicolor" / "48x48" / "apps" / f"{APP_ID}.png").is_file()
    assert os.access(app / "install.sh", os.X_OK)

    home = tmp_path / "home"
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    installed = bash(app / "install.sh", env=env)
    assert installed.returncode == 0, installed.stderr
    target = home / ".local" / "lib" / "advisor"
    data = home / ".local" / "share"
    entry = (data / "applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8").splitlines()
    assert f"Exec={target / 'advisor'}" in entry and f"TryExec={target / 'advisor'}" in entry
    assert (data / "icons" / "hicolor" / "512x512" / "apps" / f"{APP_ID}.png").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    assert (data / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    command = home / ".local" / "bin" / "advisor"
    ran = subprocess.run([str(command)], capture_output=True, text=True, timeout=30)
    assert ran.stdout == "advisor-ran\n"

    (data / "advisor").mkdir()  # the user's catalog folder: uninstalling keeps it
    removed = bash(target / "install.sh", "--uninstall", env=env)
    assert removed.returncode == 0, removed.stderr
    assert not target.exists() and not command.is_symlink()
    assert not list(data.rglob(f"{APP_ID}*"))
    assert (data / "advisor").is_dir()


def test_install_refuses_a_folder_without_the_app(tmp_path: Path) -> None:
    script = tmp_path / "install.sh"
    script.write_bytes((REPO / "packaging" / "linux" / "install.sh").read_bytes())
    done = bash(script, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")})
    assert done.returncode == 2
    assert "run install.sh from the built advisor folder" in done.stderr
    assert not (tmp_path / "home").exists()
