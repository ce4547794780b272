"""A private PostgreSQL cluster for one benchmark run: `initdb` into a temporary
directory, its own port and socket directory, stopped and removed afterwards.

The study rehearsal restarts PostgreSQL in the middle of its run; restarting the
machine's shared cluster (the one scripts/with-postgres.sh starts) would break every other
test or benchmark using it at the time, so the rehearsal restarts a cluster of its own.
As root, the cluster runs as the `postgres` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def postgres_bindir() -> Path:
    """The directory of initdb and pg_ctl: PG_BINDIR, else the newest of Debian's
    /usr/lib/postgresql/<version>/bin, else the PATH's."""
    if os.environ.get("PG_BINDIR"):
        return Path(os.environ["PG_BINDIR"])
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1]
    found = shutil.which("initdb")
    if found is None:
        raise RuntimeError("initdb not found: install PostgreSQL or set PG_BINDIR")
    return Path(found).parent


@dataclass
class Cluster:
    """A running private cluster: its port, data directory and admin URL (trust auth on
    127.0.0.1 for the `postgres` role)."""

    port: int
    root: Path
    bindir: Path

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *arguments: str, timeout: float = 120) -> None:
        """Run pg_ctl on this cluster (as the postgres user when root)."""
        _run([str(self.bindir / "pg_ctl"), "-D", str(self.data), *arguments], timeout=timeout)

    def restart(self) -> None:
        """A fast restart (`pg_ctl restart -m fast`): every connection is ended, as when a
        managed database restarts; returns once it accepts connections again."""
        self.pg_ctl("restart", "-m", "fast", "-w", "-l", str(self.root / "postgres.log"))


def _as_postgres() -> bool:
    return os.geteuid() == 0


def _run(command: list[str], timeout: float = 120) -> None:
    if _as_postgres():
        command = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(command)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed:\n{result.stdout}{result.stderr}")


@contextlib.contextmanager
def private_cluster(port: int, settings: dict[str, str] | None = None) -> Iterator[Cluster]:
    """initdb a new cluster, start it on 127.0.0.1:port (its socket in its own directory)
    with `settings` (postgres -c options), yield it; stop it at once and remove it after."""
    bindir = postgres_bindir()
    root = Path(tempfile.mkdtemp(prefix="falte-pg-"))
    if _as_postgres():
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
    cluster = Cluster(port, root, bindir)
    try:
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(cluster.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ]
        )
        options = {"listen_addresses": "127.0.0.1", "unix_socket_directories": str(root)}
        options.update(settings or {})
        flags = f"-p {port} " + " ".join(f"-c {k}={shlex.quote(v)}" for k, v in options.items())
        cluster.pg_ctl("start", "-w", "-o", flags, "-l", str(root / "postgres.log"))
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            cluster.pg_ctl("stop", "-m", "immediate", "-w", timeout=60)
        shutil.rmtree(root, ignore_errors=True)
