"""What the README and docs tell a researcher agrees with the project (issue 27): the
number of demo documents `make run` imports (point 14), and Prolific's policy on
rejections with the action behind each completion code (point 12)."""

from __future__ import annotations

import re
from pathlib import Path

from app.imports.document_formats import parse_documents
from app.rules.outcomes import OUTCOMES
from app.taxonomy import load_taxonomy

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CROWD = (ROOT / "docs" / "crowd-studies.md").read_text(encoding="utf-8")
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
ACTIONS = {
    "completed": "approve",
    "failed_checks": "manual review",
    "failed_training": "screen-out",
    "no_consent": "return",
}


def test_the_readme_counts_the_demo_documents():
    """The README said 3 demo documents; data/demo has 5."""
    documents = parse_documents(ROOT / "data" / "demo")
    number = "|".join(["\\d+", *NUMBERS])
    said = re.findall(rf"\b({number}) demo documents", README, re.I)
    assert said, "the README no longer counts the demo documents"
    for word in said:
        count = int(word) if word.isdigit() else NUMBERS.get(word.lower())
        assert count == len(documents), f"README: {word}; data/demo: {len(documents)}"
    demo_readme = (ROOT / "data" / "demo" / "README.md").read_text(encoding="utf-8")
    first = re.search(r"^(\w+) short story summaries", demo_readme, re.M).group(1)
    assert NUMBERS[first.lower()] == len(documents), f"data/demo/README.md: {first}"


def test_the_docs_give_the_action_of_every_outcome():
    section = CROWD[CROWD.index("### Prolific's actions per outcome") :]
    rows = dict(re.findall(r"^\| `(\w+)` \|[^|]*\| ([^|]+) \|$", section, re.M))
    assert set(rows) == set(OUTCOMES)
    for outcome, action in ACTIONS.items():
        assert action in rows[outcome], (outcome, rows[outcome])


def test_no_doc_suggests_rejecting_workers_who_missed_the_checks():
    """Prolific allows rejections only for failing its own kind of attention check."""
    texts = {"README.md": README, "docs/crowd-studies.md": CROWD}
    for path in ("config/taxonomy.yaml", "config/taxonomies/booookscore.yaml"):
        texts[path] = (ROOT / path).read_text(encoding="utf-8")
    for name, text in texts.items():
        for line in text.splitlines():
            if "failed_checks" in line:
                assert not re.search(r"\breject(?!ion)", line, re.I), f"{name}: {line}"
        # Examples show the default, flag; fail is only described.
        assert not re.search(r"^\s*attention_checks: fail\b", text, re.M), name


def test_missed_checks_only_flag_by_default():
    for path in ("config/taxonomy.yaml", "config/taxonomies/booookscore.yaml"):
        taxonomy = load_taxonomy(ROOT / path)
        assert "attention_checks:" not in re.sub(r"#.*", "", (ROOT / path).read_text("utf-8"))
        assert taxonomy.study.attention_checks == "flag", path
