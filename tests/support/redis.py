"""A throwaway Redis (Debian's redis-server) for tests of limits shared by processes."""

from __future__ import annotations

import shutil
import subprocess
import time

import redis

from tests.support.servers import stop


def redis_binary() -> str | None:
    """redis-server's path, or None."""
    return shutil.which("redis-server") or shutil.which("redis-server", path="/usr/bin:/usr/sbin")


def start_redis(port: int) -> subprocess.Popen:
    """redis-server on 127.0.0.1:port, in memory only; returns once it answers PING."""
    binary = redis_binary()
    if binary is None:
        raise RuntimeError("redis-server is not installed (scripts/ensure-services.sh)")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {process.returncode}")
            try:
                if client.ping():
                    return process
            except redis.ConnectionError:
                time.sleep(0.05)
    finally:
        client.close()
    stop_redis(process)
    raise RuntimeError(f"redis-server did not answer on port {port}")


def stop_redis(process: subprocess.Popen) -> None:
    """SIGTERM (nothing to save), SIGKILL if it lingers (servers.stop)."""
    stop(process)
