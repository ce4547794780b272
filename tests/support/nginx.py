"""The real nginx (Debian's package) in front of test servers, with the repository's own
configuration: config/nginx.conf.erb rendered as the Heroku buildpack renders it (the
Heroku shape: gunicorn on a unix socket), or config/nginx/nginx.conf with its listen port
and upstream servers filled in (the docker-compose shape). Both include
config/nginx/proxy.conf unchanged, which says how requests are buffered and forwarded."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import stop

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"

# The only ERB the Heroku template may use: an environment variable, with or without a
# default (`<%= ENV['PORT'] %>`, `<%= ENV['NGINX_WORKERS'] || 2 %>`).
_ERB_ENV = re.compile(
    r"""<%=\s*ENV\[\s*['"](?P<name>\w+)['"]\s*\]"""
    r"""(?:\s*\|\|\s*(?:'(?P<sq>[^']*)'|"(?P<dq>[^"]*)"|(?P<num>\d+)))?\s*%>"""
)


def nginx_binary() -> str | None:
    """nginx's path (Debian puts it in /usr/sbin), or None."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def render_erb(template: str, env: Mapping[str, str]) -> str:
    """The template with each `<%= ENV[...] %>` replaced as Ruby's ERB would; any other
    ERB, or a variable without a value or default, is an error (the template must stay
    this simple for the test to render what Heroku runs)."""

    def value(match: re.Match) -> str:
        name = match["name"]
        default = match["sq"] if match["sq"] is not None else match["dq"] or match["num"]
        if name in env:
            return env[name]
        if default is None:
            raise ValueError(f"nginx.conf.erb: ENV['{name}'] has no value and no default")
        return default

    rendered = _ERB_ENV.sub(value, template)
    if "<%" in rendered:
        raise ValueError("nginx.conf.erb: ERB other than ENV lookups: " + rendered[:200])
    return rendered


def _prepare(prefix: Path) -> Path:
    """The app's layout under `prefix`: config/, config/nginx/, logs/nginx/."""
    shutil.copytree(CONFIG / "nginx", prefix / "config" / "nginx")
    (prefix / "logs" / "nginx").mkdir(parents=True)
    return prefix / "config"


def heroku_config(prefix: Path, port: int, socket_path: Path) -> Path:
    """config/nginx.conf.erb rendered under `prefix` for PORT and GUNICORN_SOCKET, as
    bin/start-nginx does; the path of the nginx.conf to run with `-p prefix`."""
    config = _prepare(prefix)
    env = {"PORT": str(port), "GUNICORN_SOCKET": str(socket_path)}
    rendered = render_erb((CONFIG / "nginx.conf.erb").read_text(), env)
    (config / "nginx.conf").write_text(rendered)
    return config / "nginx.conf"


def compose_config(prefix: Path, port: int, upstreams: Sequence[str]) -> Path:
    """config/nginx/nginx.conf under `prefix`, listening on 127.0.0.1:port, its upstream
    the given host:port servers instead of compose's `web:8000`, logging under `prefix`."""
    config = _prepare(prefix) / "nginx"
    text = (config / "nginx.conf").read_text()
    servers = "".join(f"        server {address} fail_timeout=0;\n" for address in upstreams)
    replacements = [
        (r"^\s*listen 80;\n", f"        listen 127.0.0.1:{port};\n"),
        (r"^\s*server web:8000[^;]*;\n", servers),
        (r"access_log /dev/stdout", f"access_log {prefix}/logs/nginx/access.log"),
        # Debian's compiled-in temporary directories are root's; the image's are writable.
        (r"^http \{\n", f"http {{\n    client_body_temp_path {prefix}/logs/nginx/body;\n"),
    ]
    for pattern, replacement in replacements:
        text, count = re.subn(pattern, lambda _, r=replacement: r, text, count=1, flags=re.M)
        if count != 1:
            raise ValueError(f"config/nginx/nginx.conf: no line matches {pattern!r}")
    (config / "nginx.conf").write_text(text)
    return config / "nginx.conf"


def start_nginx(prefix: Path, config: Path, port: int) -> subprocess.Popen:
    """`nginx -p prefix -c config` in the foreground; returns once it accepts connections
    on 127.0.0.1:port."""
    binary = nginx_binary()
    if binary is None:
        raise RuntimeError("nginx is not installed (scripts/ensure-services.sh installs it)")
    text = config.read_text()
    globals_ = "" if "daemon off;" in text else "daemon off; "
    if not re.search(r"^pid ", text, re.M):
        globals_ += f"pid {prefix}/logs/nginx/nginx.pid; "
    if os.geteuid() == 0:
        # As root, nginx runs its workers as nobody, who may not enter pytest's private
        # temporary directories (the socket, the logs); on Heroku and in CI it is one user.
        globals_ += "user root;"
    command = [binary, "-p", f"{prefix}/", "-c", str(config)]
    if globals_:
        command += ["-g", globals_.strip()]
    error_log = prefix / "logs" / "nginx" / "stderr.log"
    with error_log.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    process.prefix = prefix  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited with {process.returncode}:\n{logs(process)}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process
        except OSError:
            time.sleep(0.05)
    stop_nginx(process)
    raise RuntimeError(f"nginx did not listen on {port}:\n{logs(process)}")


def logs(process: subprocess.Popen) -> str:
    """nginx's error output and error log so far."""
    directory = Path(process.prefix) / "logs" / "nginx"  # type: ignore[attr-defined]
    return "\n".join(
        path.read_text(errors="replace")
        for name in ("stderr.log", "error.log")
        if (path := directory / name).exists()
    )


def access_log(process: subprocess.Popen) -> str:
    """nginx's access log so far (both shapes write it under the prefix here)."""
    path = Path(process.prefix) / "logs" / "nginx" / "access.log"  # type: ignore[attr-defined]
    return path.read_text(errors="replace") if path.exists() else ""


def stop_nginx(process: subprocess.Popen) -> None:
    """Fast shutdown (SIGTERM); SIGKILL if it lingers (servers.stop)."""
    stop(process)


@contextmanager
def nginx_before(
    app: subprocess.Popen, prefix: Path, port: int, config: Callable[[], Path]
) -> Iterator[subprocess.Popen]:
    """nginx on `port` with the file `config()` writes, in front of the started `app`;
    both stopped on leaving (the app at once when nginx does not start)."""
    try:
        nginx = start_nginx(prefix, config(), port)
    except Exception:
        stop(app)
        raise
    try:
        yield nginx
    finally:
        stop_nginx(nginx)
        stop(app)
