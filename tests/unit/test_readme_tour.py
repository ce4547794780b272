"""The README works for a newcomer (issue 14 point 14): the tour and the validation recipe
run without an activated virtualenv, every `make` target it names exists, its screenshots
are there, and .env.example describes the rate limits as what the code uses."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert found, f"README has no section {title!r}"
    return found.group(1)


def test_flask_commands_in_the_tour_and_recipe_need_no_activated_venv():
    for title in ("The two commands", "A tour", "Precision validation (BooookScore's protocol)"):
        text = _section(title)
        bare = re.findall(r"(?<![/\w])flask --app", text)
        assert not bare, f"{title}: write .venv/bin/flask --app (or a make target)"


def test_every_make_target_the_readme_names_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    named = set(re.findall(r"`make ([a-z][a-z-]*)", README))
    assert named, "the README names no make target"
    assert named <= targets, named - targets
    assert "make run PORT=" in README and "HOST=" in README


def test_the_screenshots_are_committed_and_small():
    images = re.findall(r"!\[[^\]]+\]\((docs/screenshots/[\w-]+\.png)\)", README)
    assert len(images) == 2
    assert README.index(images[0]) < README.index("## The two commands")
    for image in images:
        data = (ROOT / image).read_bytes()
        assert data.startswith(b"\x89PNG")
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (1280, 800), image
        assert len(data) < 300_000, f"{image}: {len(data)} bytes (run make screenshots)"


def test_env_example_names_the_limits_library_not_flask_limiter():
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert "Flask-Limiter" not in text
    assert "`limits` library" in text


def test_the_test_setup_installs_an_emoji_font():
    script = (ROOT / "scripts" / "ensure-browser.sh").read_text(encoding="utf-8")
    assert "fonts-noto-color-emoji" in script
