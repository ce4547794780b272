"""Real servers for resilience tests and benchmarks: gunicorn as a subprocess."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# Below Linux's ephemeral range (32768-60999): the kernel never lends these ports to a
# client connection, so a port found free here is still free when a server binds it (a
# port 0 bind gives an ephemeral one, which an outgoing connection could take meanwhile).
TEST_PORTS = (20000, 32767)


def free_port() -> int:
    """A TCP port free on every address (servers and nginx bind 0.0.0.0 or 127.0.0.1)."""
    for _ in range(500):
        port = random.randint(*TEST_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind(("0.0.0.0", port))  # noqa: S104 (a probe, closed at once)
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {TEST_PORTS}")


def start_gunicorn(
    app_spec: str,
    database_url: str,
    port: int | None,
    *,
    socket_path: Path | None = None,
    access_log: str = "/dev/null",
    **env_overrides: str,
) -> subprocess.Popen:
    """gunicorn with the project's gunicorn.conf.py on 127.0.0.1:port, or on the unix
    socket `socket_path` (as on Heroku behind nginx; port None); returns once every worker
    has loaded the app (its "Worker ready" line in the error log): a load started earlier
    would all land on the first worker up."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "APP_ENV": "development",
        **env_overrides,
    }
    if socket_path is not None:
        env["GUNICORN_SOCKET"] = str(socket_path)
        env["GUNICORN_READY_FILE"] = f"{socket_path}.ready"
    workers = int(env.get("WEB_CONCURRENCY", "2"))
    handle, error_log = tempfile.mkstemp(prefix="gunicorn-", suffix=".log")
    os.close(handle)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--config",
            "gunicorn.conf.py",
            "--access-logfile",
            access_log,
            "--error-logfile",
            error_log,
            app_spec,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    process.error_log = error_log  # type: ignore[attr-defined]
    # A shared machine under load may take longer than the usual few seconds.
    deadline = time.monotonic() + float(os.environ.get("GUNICORN_START_SECONDS", "30"))
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn {app_spec} exited with {process.returncode}")
        if Path(error_log).read_text().count("Worker ready") >= workers:
            try:
                _connect(port, socket_path)
                return process
            except OSError:
                pass
        time.sleep(0.1)
    log = Path(error_log).read_text()[-2000:]  # before stop() removes it
    stop(process)
    raise RuntimeError(
        f"gunicorn {app_spec} did not start {workers} workers on {socket_path or port}:\n" + log
    )


def _connect(port: int | None, socket_path: Path | None) -> None:
    if socket_path is None:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return
    with socket.socket(socket.AF_UNIX) as unix:
        unix.settimeout(0.5)
        unix.connect(str(socket_path))


def error_log_text(process: subprocess.Popen) -> str:
    """gunicorn's error log so far (where the app's warnings go too)."""
    return Path(process.error_log).read_text(errors="replace")  # type: ignore[attr-defined]


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it lingers; its error log removed."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    error_log = getattr(process, "error_log", None)
    if error_log:
        Path(error_log).unlink(missing_ok=True)


def worker_pids(master_pid: int) -> list[int]:
    """The gunicorn master's worker processes (Linux /proc)."""
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children")
    return [int(pid) for pid in children.read_text().split()] if children.exists() else []
