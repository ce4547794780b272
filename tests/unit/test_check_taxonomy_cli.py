"""`flask check-taxonomy` as a user runs it: a subprocess, even with a broken configured file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "title: x\ncategories:\n  - key: A B\n    name: y\n    type: weird\n"


def flask(*args: str, taxonomy: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TAXONOMY_PATH": str(taxonomy)}
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_broken_configured_file_lists_every_problem_with_its_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BROKEN)
    result = flask("check-taxonomy", taxonomy=bad)
    assert result.returncode == 1
    assert f"{bad}:3: categories[0].key:" in result.stderr
    assert f"{bad}:5: categories[0].type:" in result.stderr
    assert "Traceback" not in result.stderr


def test_another_file_can_be_checked_while_the_configured_one_is_broken(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BROKEN)
    result = flask("check-taxonomy", str(ROOT / "config/taxonomies/booookscore.yaml"), taxonomy=bad)
    assert result.returncode == 0, result.stderr
    assert "8 categories (6 singleton, 2 paired)" in result.stdout
