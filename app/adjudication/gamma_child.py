"""The child process of app.adjudication.gamma_runner: computes gamma under a memory limit.

Run as a script, `python app/adjudication/gamma_child.py MEGABYTES SECONDS [--nice]`,
never imported: the script's own folder is then first on sys.path, so it imports the pure
gamma module as `gamma` and nothing of the app (no Flask, no database), which keeps its
start fast and its memory its own. It limits its address space to MEGABYTES (RLIMIT_AS;
0: no limit) and, as a backstop should its parent die, its CPU time to twice SECONDS a job
(RLIMIT_CPU: the kernel ends it past that), then reads one job a line on standard input,
`{"units": [[annotator, start, end, category], ...], "annotators": [...], "samples": int,
"seed": int}`, and answers each with one line: `{"gamma", "observed", "expected",
"mc_se", "method"}`, or `{"skipped": "memory"}` (then exits: a process that ran out of
memory is not trusted with the next job). The parent enforces the time limit.
"""

import json
import math
import os
import resource
import sys

from gamma import Unit, gamma  # this script's folder (see above)


def _limit_memory(megabytes: int) -> None:
    if megabytes <= 0:
        return
    limit = megabytes * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as exc:  # above the hard limit: run under that one
        print(f"gamma child: address-space limit not set ({exc})", file=sys.stderr)


def _limit_cpu(seconds: float) -> None:
    """The parent kills a job at SECONDS of wall time; should the parent be gone, the
    kernel stops this process at twice that much CPU time for the job."""
    if seconds <= 0:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + 2 * seconds + 1)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError) as exc:
        print(f"gamma child: CPU limit not set ({exc})", file=sys.stderr)


def _answer(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def main() -> None:
    _limit_memory(int(sys.argv[1]))
    seconds = float(sys.argv[2])
    if "--nice" in sys.argv[3:]:
        os.nice(10)  # pages keep the CPU before this background arithmetic
    for line in sys.stdin:
        job = json.loads(line)
        _limit_cpu(seconds)
        units = [Unit(*row) for row in job["units"]]
        try:
            result = gamma(
                units, samples=job["samples"], seed=job["seed"], annotators=job["annotators"]
            )
        except MemoryError:
            del units
            _answer({"skipped": "memory"})
            return
        _answer(
            {
                "gamma": result.gamma,
                "observed": result.observed,
                "expected": result.expected,
                "mc_se": result.mc_se,
                "method": result.method,
            }
        )


if __name__ == "__main__":
    main()
