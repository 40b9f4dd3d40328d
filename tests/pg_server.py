"""A throw-away PostgreSQL server for tests: a fresh cluster in a temporary folder, listening only on a Unix
socket in that folder, stopped and deleted at the end. Uses Debian's `postgresql` package (scripts/setup.sh
--dev installs it). PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
PORT = 54329  # only the socket file's name: the server listens on no TCP port (listen_addresses='')


def _bin(name: str) -> str:
    for folder in BIN_DIRS:
        if (folder / name).exists():
            return str(folder / name)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"PostgreSQL's {name} is not installed: run scripts/setup.sh --dev")
    return found


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a cluster; yields the libpq connection string of its `postgres` database."""
    folder = Path(tempfile.mkdtemp(prefix="advisor-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    data = folder / "data"
    owner = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    run = lambda argv: subprocess.run(_as_server_user(argv), check=True, capture_output=True, text=True)  # noqa: E731
    try:
        run([_bin("initdb"), "-D", str(data), "-U", owner, "--auth=trust", "-E", "UTF8", "--no-sync"])
        options = f"-c listen_addresses='' -k {folder} -p {PORT} -c fsync=off"
        run([_bin("pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(folder / "log"), "start"])
        try:
            yield f"host={folder} port={PORT} user={owner} dbname=postgres"
        finally:
            run([_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(conninfo: str, name: str, template: str | None = None) -> str:
    """Create a database, empty or a copy of `template`; -> its SQLAlchemy URL (psycopg 3 over the socket)."""
    copy = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
    params = dict(part.split("=", 1) for part in conninfo.split())
    return f"postgresql+psycopg://{params['user']}@/{name}?host={params['host']}&port={params['port']}"
