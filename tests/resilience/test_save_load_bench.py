"""bench.save_load runs as bench/README.md says: both servers (the app and the bare
baseline) behind nginx with config/nginx, the database checked against what the clients
were acknowledged, and each round's spread of the clients' median latencies printed (what
showed where the slowest saves waited). A run at a tiny size: the figures themselves are
bench/README.md's, not a test's, so the targets' verdict is not asserted here. Each round
also says how many of its slowest 1% began in its opening (all clients start at once),
and the p99 of what began after it."""

from __future__ import annotations

import re

from bench import save_load
from tests.support.apps import require_or_skip
from tests.support.nginx import nginx_binary


def test_the_save_bench_runs_behind_nginx_and_checks_every_acknowledged_save(postgres_url, capsys):
    if nginx_binary() is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")
    tiny = "--annotators 4 --adds 3 --rounds 2 --paced 4 --paced-seconds 1 --capacity 4"
    save_load.main([*tiny.split(), "--capacity-runs", "1"])
    out = capsys.readouterr().out
    assert "nginx in front (config/nginx)" in out
    # Every request went through nginx: each access log holds at least the rounds' requests.
    pattern = r"^nginx in front of the (app|baseline) logged (\d+) requests$"
    logged = dict(re.findall(pattern, out, re.M))
    measured = 2 * 4 * save_load.requests_per_annotator(3)
    assert logged.keys() == {"app", "baseline"}, out
    assert all(int(n) >= measured for n in logged.values()), (logged, measured)
    rounds = re.findall(r"^round \d (app|base) .* errors (\d+)$", out, re.M)
    assert len(rounds) == 4 and all(errors == "0" for _, errors in rounds), out
    # 2 rounds x 4 annotators x 3 adds, each stored once, 3 of each session's removed.
    assert (
        "acknowledged saves 24, lost 0, duplicated 0, removal state wrong 0, "
        "sessions submitted 8/8" in out
    ), out
    spreads = re.findall(r"clients' median latency: lowest (\d+) ms, median \d+ ms, highest", out)
    assert len(spreads) >= 4, out
    openings = re.findall(r"slowest 1%: (\d+) of (\d+) began in the first 0.5 s; p99 of", out)
    assert len(openings) == 4 and all(int(a) <= int(b) for a, b in openings), out
    assert "p99 ratio of the requests begun after each round's first 0.5 s" in out


def test_the_opening_is_told_apart_from_the_rest_of_a_round():
    """opening(): of the slowest 1% (here the single slowest request, nearest rank), how
    many began in the first half second, and the p99 of the requests begun after it."""
    stats = save_load.Stats()
    for k in range(100):  # 100 requests over 2 s; the slowest two at 0.2 s and 1.5 s
        latency = {10: 0.300, 75: 0.250}.get(k, 0.010 + k / 10000)
        stats.record(latency, started=100 + k * 0.02)
    assert save_load.opening(stats) == (1, 1, 250.0)
    # Begun after the opening: 75 requests (0.5 s on); their p99 (nearest rank) is the
    # 0.25 s one. Without it, the slowest later request is the last one, 19.9 ms.
    stats.latencies[75] = 0.005
    early, slowest, later_p99 = save_load.opening(stats)
    assert (early, slowest) == (1, 1) and round(later_p99, 1) == 19.9
