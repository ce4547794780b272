"""Gamma computations under the analysis limits: ANALYSIS_TIME_LIMIT seconds and
ANALYSIS_MEMORY_LIMIT megabytes per document (0: none).

A document's gamma runs in a child process (app/adjudication/gamma_child.py, which
imports nothing of the app) whose address space is limited (RLIMIT_AS); this process
waits for its answer at most the time limit and kills it after that. One child serves
one document after the other, so its start is paid once per run; a killed child, or one
that ran out of memory, is replaced for the next document. A document over a limit gets
`{"skipped": "time" | "memory" | "error"}` instead of a value, which the reports list
(`agreement.gamma.skipped`); nothing waits longer than the limit (issue 26 point 4: two
workers' duplicated spans once held a CPU and gigabytes for minutes).
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.adjudication.gamma import Unit
from app.jobs.limits import Limits

CHILD = Path(__file__).with_name("gamma_child.py")
log = logging.getLogger(__name__)


class BoundedGamma:
    """One child process at a time that computes documents' gamma under `limits`; use as
    a context manager (the child ends with it). `nice`: at a lower CPU priority (the
    analysis queue's jobs, so that pages keep the CPU)."""

    def __init__(self, limits: Limits, nice: bool = False) -> None:
        self.limits = limits
        self.nice = nice
        self.child: subprocess.Popen | None = None

    def __enter__(self) -> BoundedGamma:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def compute(
        self, units: Sequence[Unit], annotators: Sequence[str], samples: int, seed: int
    ) -> dict[str, Any]:
        """{"gamma", "observed", "expected", "mc_se", "method"} of one document, or
        {"skipped": reason} when it broke a limit."""
        job = {
            "units": [[u.annotator, u.start, u.end, u.category] for u in units],
            "annotators": list(annotators),
            "samples": samples,
            "seed": seed,
        }
        child = self._child()
        try:
            assert child.stdin is not None
            child.stdin.write(json.dumps(job) + "\n")
            child.stdin.flush()
        except OSError:  # it died since its last answer: once more with a new one
            self.close()
            child = self._child()
            assert child.stdin is not None
            child.stdin.write(json.dumps(job) + "\n")
            child.stdin.flush()
        answer = self._answer(child)
        if "skipped" in answer:
            self.close()
        return answer

    def _answer(self, child: subprocess.Popen) -> dict[str, Any]:
        assert child.stdout is not None
        timeout = self.limits.seconds if self.limits.seconds > 0 else None
        started = time.monotonic()
        ready, _, _ = select.select([child.stdout], [], [], timeout)
        if not ready:
            log.warning(
                "gamma skipped: over ANALYSIS_TIME_LIMIT (%.1f s)", time.monotonic() - started
            )
            return {"skipped": "time"}
        line = child.stdout.readline()
        if not line:  # killed (the kernel's out-of-memory killer, say) or crashed
            child.wait()
            log.warning("gamma skipped: its process ended with %s", child.returncode)
            return {"skipped": "error"}
        answer = json.loads(line)
        if answer.get("skipped") == "memory":
            log.warning("gamma skipped: over ANALYSIS_MEMORY_LIMIT (%d MB)", self.limits.megabytes)
        return answer

    def _child(self) -> subprocess.Popen:
        if self.child is None or self.child.poll() is not None:
            limits = self.limits
            command = [sys.executable, str(CHILD), str(limits.megabytes), str(limits.seconds)]
            if self.nice:
                command.append("--nice")
            # A fixed argv, no shell; exec'd at once (no Python runs between fork and exec,
            # so a threaded web worker can start it safely).
            self.child = subprocess.Popen(  # noqa: S603
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
                cwd=CHILD.parent,
            )
        return self.child

    def close(self) -> None:
        """End the child (killed: it may be in the middle of a computation)."""
        child, self.child = self.child, None
        if child is None:
            return
        if child.poll() is None:
            child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
