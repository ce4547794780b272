"""The README is a front page and docs/ is a house a newcomer can find their way in
(issue 29 point 11): the README stays short and shows the two commands, and the index
page docs/README.md links every page of docs/, so no page is left where nobody finds it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_LIMIT = 15_000  # bytes
INDEX = ROOT / "docs" / "README.md"
LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>#]+)(?:#[^)\s>]*)?>?\s*\)")


def linked_files(page: Path) -> set[Path]:
    """The files a Markdown page links to, resolved from the page's folder."""
    text = page.read_text(encoding="utf-8")
    return {
        (page.parent / target).resolve()
        for target in LINK_TARGET.findall(text)
        if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target)
    }


def test_the_readme_is_a_front_page_of_at_most_15000_bytes():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, (
        f"README.md has {size} bytes (at most {README_LIMIT}): move details to a page of docs/"
    )


def test_the_readme_shows_the_two_commands_and_links_the_index():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^make run\b", readme, re.M) and re.search(r"^make test\b", readme, re.M)
    assert INDEX.resolve() in linked_files(ROOT / "README.md"), "README: link docs/README.md"


def test_the_docs_index_links_every_page_of_docs():
    pages = {path.resolve() for path in (ROOT / "docs").glob("*.md")} - {INDEX.resolve()}
    assert len(pages) > 10, "docs/ has fewer pages than expected: is the glob right?"
    missing = sorted(path.name for path in pages - linked_files(INDEX))
    assert not missing, f"docs/README.md does not link: {', '.join(missing)}"


def test_every_docs_page_has_one_title():
    """Readable on the forge as it is: each page starts with its one level-1 heading."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = re.sub(r"^(```|~~~).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        titles = re.findall(r"^# \S", text, re.M)
        assert text.startswith("# ") and len(titles) == 1, f"docs/{page.name}: {len(titles)} titles"
