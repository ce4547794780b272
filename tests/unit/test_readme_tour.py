"""The README works for a newcomer (issue 14 point 14): the tour and the recipes of docs/
run without an activated virtualenv, every `make` target the README and docs/ name exists,
its screenshots are there, and .env.example describes the rate limits as what the code
uses."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path.name: path.read_text(encoding="utf-8") for path in sorted(ROOT.glob("docs/*.md"))}
BARE_FLASK = re.compile(r"(?<![/\w])flask --app")


def _section(text: str, title: str, where: str = "README") -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"{where} has no section {title!r}"
    return found.group(1)


def test_flask_commands_in_the_tour_and_recipe_need_no_activated_venv():
    sections = {
        f"README: {title}": _section(README, title) for title in ("The two commands", "A tour")
    }
    sections["docs/validation-rounds.md: the recipe"] = _section(
        DOCS["validation-rounds.md"], "A round from start to finish", "docs/validation-rounds.md"
    )
    for where, text in sections.items():
        bare = BARE_FLASK.findall(text)
        assert not bare, f"{where}: write .venv/bin/flask --app (or a make target)"


def test_no_shell_example_of_the_docs_needs_an_activated_venv():
    """Every ```sh block of README.md and docs/ runs from a fresh clone as it is."""
    pages = {"README.md": README, **{f"docs/{name}": text for name, text in DOCS.items()}}
    blocks = 0
    for page, text in pages.items():
        for block in re.findall(r"^```(?:sh|bash|console)\n(.*?)^```", text, re.M | re.S):
            blocks += 1
            bare = [line for line in block.splitlines() if BARE_FLASK.search(line)]
            assert not bare, f"{page}: write .venv/bin/flask --app: {bare}"
    assert blocks > 5, f"only {blocks} shell examples found: is the pattern right?"


def test_every_make_target_the_readme_and_docs_name_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, re.M))
    named = set(re.findall(r"`make ([a-z][a-z0-9-]*)", README))
    assert named, "the README names no make target"
    assert named <= targets, named - targets
    for name, text in DOCS.items():
        named = set(re.findall(r"`make ([a-z][a-z0-9-]*)", text))
        assert named <= targets, (f"docs/{name}", named - targets)
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
