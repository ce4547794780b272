"""The repository stands on its own (issue 29 point 12): no tracked file cites a document
outside it, and the links of its Markdown pages lead somewhere.

- No tracked file (`git ls-files`) cites the design notes the project started from, or a
  path into the folder beside the checkout (`../` + `shared`): a clone has neither.
  The contracts live in docs/contracts.md; cite its sections instead.
- Every relative link in README.md and docs/*.md names a file that exists, and a link
  with an anchor into a Markdown page names a heading of that page (GitHub's anchors).
- Every citation of a docs/contracts.md section anywhere in the repository
  (`docs/contracts.md#6-file-formats`, "docs/contracts.md, section 6") names a section
  that the page has.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = "docs/contracts.md"

# Built from pieces, so that this file does not cite what it looks for.
OUTSIDE_CITATIONS = (
    ("the design notes", re.compile(r"\bDESIG[N](?:\.md)?\b")),
    ("a path beside the checkout", re.compile(r"\.\./shar[e]d\b")),
    ("a path of the build machine", re.compile(r"/work/shar[e]d\b")),
)
# Folders that are never part of the repository when git cannot list its files.
UNTRACKED = {".git", ".venv", "instance", "node_modules", "__pycache__", ".pytest_cache"}

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
SECTION_CITATION = re.compile(r"docs/contracts\.md(?:#([\w-]+)|,? sections? (\d+))")


@cache
def tracked_files() -> tuple[str, ...]:
    """The repository's files, as git lists them (a walk of the tree without git)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode("utf-8")
        names = [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = [
            path.relative_to(ROOT).as_posix()
            for path in ROOT.rglob("*")
            if path.is_file() and not UNTRACKED & set(path.relative_to(ROOT).parts)
        ]
    assert names, "no files found in the repository"
    return tuple(sorted(names))


def text_of(name: str) -> str | None:
    """A tracked file's text; None for a binary file (images, compiled catalogues)."""
    path = ROOT / name
    if not path.is_file():  # listed by git but deleted in the work tree
        return None
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def markdown_pages() -> list[str]:
    """README.md and every page of docs/."""
    pages = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("docs/*.md"))]
    assert len(pages) > 1, "docs/ has no pages"
    return pages


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: Markdown emphasis and code marks dropped, lower
    case, every character but letters, digits, spaces, '-' and '_' removed, spaces -> '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").replace("*", "")
    kept = "".join(
        char
        for char in text.lower()
        if char in " -_" or unicodedata.category(char)[0] in ("L", "N")
    )
    return kept.replace(" ", "-")


@cache
def anchors(name: str) -> frozenset[str]:
    """Every anchor of a Markdown file's headings (duplicates get -1, -2, as on GitHub)."""
    text = FENCE.sub("", (ROOT / name).read_text(encoding="utf-8"))
    found: list[str] = []
    for heading in HEADING.findall(text):
        anchor = base = github_anchor(heading)
        number = 0
        while anchor in found:
            number += 1
            anchor = f"{base}-{number}"
        found.append(anchor)
    return frozenset(found)


def links(name: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and image of a page, outside code."""
    text = (ROOT / name).read_text(encoding="utf-8")
    # Blank out code with spaces of the same length, so line numbers stay right.
    text = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    text = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), text)
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(text)]


def is_relative(target: str) -> bool:
    """A link into the repository: no scheme (https:, mailto:) and not site-absolute."""
    return not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) and not target.startswith("//")


def test_no_tracked_file_cites_a_document_outside_the_repository():
    problems = []
    for name in tracked_files():
        text = text_of(name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in OUTSIDE_CITATIONS:
                if pattern.search(line):
                    problems.append(f"{name}:{number}: cites {what}: {line.strip()[:100]}")
    assert not problems, (
        f"cite {CONTRACTS} (its sections) or another page of the repository instead:\n"
        + "\n".join(problems)
    )


def test_the_contracts_page_is_in_the_repository_with_its_ten_sections():
    assert CONTRACTS in tracked_files() or (ROOT / CONTRACTS).is_file()
    numbered = sorted(
        int(m.group(1))
        for m in re.finditer(r"^## (\d+)\. ", (ROOT / CONTRACTS).read_text("utf-8"), re.M)
    )
    assert numbered == list(range(1, 11)), numbered


@pytest.mark.parametrize("page", markdown_pages())
def test_relative_links_of_the_markdown_pages_lead_to_files_and_headings(page):
    problems = []
    checked = 0
    for line, target in links(page):
        if not is_relative(target):
            continue
        checked += 1
        path_part, _, anchor = target.partition("#")
        resolved = (ROOT / page).parent / path_part if path_part else ROOT / page
        try:
            inside = resolved.resolve().relative_to(ROOT)
        except ValueError:
            problems.append(f"{page}:{line}: {target}: leads outside the repository")
            continue
        if not resolved.exists():
            problems.append(f"{page}:{line}: {target}: no file {inside.as_posix()}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(inside.as_posix()):
            problems.append(f"{page}:{line}: {target}: no heading #{anchor} there")
    assert not problems, "\n".join(problems)
    if page in ("README.md", CONTRACTS):
        assert checked, f"{page} has no relative link: is the link pattern right?"


@pytest.mark.parametrize("page", markdown_pages())
def test_every_table_row_has_its_header_cells(page):
    """A `|` inside a table cell (even in `code`) ends the cell unless written `\\|`."""
    text = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), (ROOT / page).read_text("utf-8"))
    problems, header = [], None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            header = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line))
        if header is None:
            header = cells
        elif cells != header:
            problems.append(f"{page}:{number}: {cells - 1} cells, the header has {header - 1}")
    assert not problems, "\n".join(problems)


def test_every_citation_of_a_contracts_section_names_one_the_page_has():
    sections = anchors(CONTRACTS)
    numbers = {m.group(1) for a in sections if (m := re.match(r"(\d+)-", a))}
    problems, cited = [], 0
    for name in tracked_files():
        text = text_of(name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for m in SECTION_CITATION.finditer(line):
                cited += 1
                anchor, section = m.groups()
                if anchor and anchor not in sections:
                    problems.append(f"{name}:{number}: no section #{anchor} in {CONTRACTS}")
                if section and section not in numbers:
                    problems.append(f"{name}:{number}: no section {section} in {CONTRACTS}")
    assert cited, f"nothing cites {CONTRACTS}: is the citation pattern right?"
    assert not problems, "\n".join(problems)


def test_github_anchors_are_made_as_github_makes_them():
    assert github_anchor("6. File formats") == "6-file-formats"
    assert github_anchor("Names relied on by `external` checks") == (
        "names-relied-on-by-external-checks"
    )
    assert github_anchor("save_load: the annotator page's template (issue 15)") == (
        "save_load-the-annotator-pages-template-issue-15"
    )
