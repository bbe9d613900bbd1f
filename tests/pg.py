"""A PostgreSQL server for the tests: the one VERISCRIBE_TEST_PG names, or a throwaway one.

``VERISCRIBE_TEST_PG=postgresql://USER@HOST:PORT/DB`` names a server the tests may create
and drop databases on (``.ci/run`` starts one). Without it, a throwaway server is started
in a temporary directory when PostgreSQL's binaries are installed; PostgreSQL refuses to
run as root, so as root the server runs as the ``postgres`` user. Without either, the
PostgreSQL cases are skipped with the reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ENV = "VERISCRIBE_TEST_PG"


def pg_bin() -> Path | None:
    """Return the directory of PostgreSQL's server binaries, if installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def throwaway_server(bindir: Path) -> Iterator[str]:
    """Run a PostgreSQL server in a temporary directory; yield its admin DSN."""
    root = Path(tempfile.mkdtemp(prefix="veriscribe-pg-"))
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    if as_root:
        shutil.chown(root, "postgres")
    data, log, port = root / "data", root / "log", _free_port()
    options = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c max_connections=200"
    )
    run = [*prefix, str(bindir / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        [*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust"]
        + ["-U", "postgres", "--no-sync", "--encoding=UTF8", "--locale=C"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*run, "-o", options, "-l", str(log), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*run, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def database_dsn(admin: str, name: str) -> str:
    """Return the URL of database ``name`` on the admin URL's server."""
    return urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))


@contextmanager
def fresh_database(admin: str) -> Iterator[str]:
    """Create an empty database for one test; yield its DSN (as a URL); drop it after."""
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield database_dsn(admin, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
