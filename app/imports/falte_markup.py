"""FALTE's own input: paragraphs with the entity marks its NER step writes. Pure.

FALTE's `stories.json` (tagoyal/falte-tool, made by `enable_entity_highlighting.py`)
holds paragraphs such as ``<span class = "ne ne-4"> John</span><span class = "ne ne-0">
Fenwick</span>, an aspiring artist``; its page inserts them as HTML, so a reader sees the
text without the tags, with whitespace as a browser renders it: every run of spaces and
line breaks shows as one space, and none at the start or end of the paragraph (so the
space inside ``<span> John</span>`` at the start disappears, and ``Mr.<span> Morrison``
reads "Mr. Morrison"). Character references (``&amp;``) show as their character.

`parse_paragraph` gives that text and the names inside the ``ne-N`` marks (the
document's entities, for the coreference cues). Markup is read only in a paragraph that
carries at least one of FALTE's entity marks (``<span class="ne ne-N">``): every other
paragraph is plain text and stays exactly as it is, angle brackets and all (an LLM's
``<think>``, code, "if a<b and c>d"), as the same text in a .txt file does. In a
paragraph with entity marks, any other markup (another element, attribute or class, a
comment, an unclosed or stray tag) is refused: workers must never read tags. The HTML is
read with the standard library's html.parser, not with regular expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

_NE_CLASS = re.compile(r"ne-\d+")
_WHITESPACE = re.compile(r"\s+")


class MarkupError(ValueError):
    """A paragraph holds markup other than FALTE's entity marks."""


@dataclass(frozen=True)
class MarkedParagraph:
    """A paragraph as FALTE's page shows it, and the entity names its marks hold."""

    text: str
    entities: tuple[str, ...]  # in order of first mention, each once


def has_entity_marks(paragraph: str) -> bool:
    """True when html.parser finds one of FALTE's entity marks (<span class="ne ne-N">)."""
    probe = _Probe()
    probe.feed(paragraph)
    probe.close()
    return probe.found


def parse_paragraph(paragraph: str) -> MarkedParagraph:
    """The rendered text and entity names of a FALTE paragraph (one with entity marks);
    any other paragraph is plain text, as it is. Raise MarkupError for other markup in a
    paragraph with entity marks."""
    if not has_entity_marks(paragraph):
        return MarkedParagraph(paragraph, ())
    parser = _EntityMarks()
    parser.feed(paragraph)
    parser.close()
    if parser.open_marks:
        raise MarkupError(f"<span> of {parser.open_marks[-1][0]} is not closed")
    names = dict.fromkeys(name for name in parser.names if name)
    return MarkedParagraph(_rendered("".join(parser.parts)), tuple(names))


def _rendered(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _is_entity_mark(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    """<span class="ne ne-N"> and nothing more: FALTE's mark of a named entity."""
    attributes = dict(attrs)
    classes = (attributes.get("class") or "").split()
    return (
        tag == "span"
        and set(attributes) == {"class"}
        and len(classes) == 2
        and classes[0] == "ne"
        and bool(_NE_CLASS.fullmatch(classes[1]))
    )


class _Probe(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found = False

    def handle_starttag(self, tag, attrs) -> None:
        self.found = self.found or _is_entity_mark(tag, attrs)


class _EntityMarks(HTMLParser):
    """Collects text and the contents of ``<span class="ne ne-N">``; refuses anything else."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.names: list[str] = []
        self.open_marks: list[tuple[str, int]] = []  # (ne-N, index in parts where it began)

    def handle_starttag(self, tag, attrs) -> None:
        if not _is_entity_mark(tag, attrs):
            raise MarkupError(
                f"markup other than FALTE's entity marks ({self.get_starttag_text()!r}) in "
                'a paragraph with entity marks; only <span class="ne ne-N">name</span> is '
                "read there (a paragraph without entity marks is read as plain text)"
            )
        if self.open_marks:
            raise MarkupError("an entity mark inside another one")
        self.open_marks.append((dict(attrs)["class"].split()[1], len(self.parts)))

    def handle_startendtag(self, tag, attrs) -> None:
        raise MarkupError(f"markup other than FALTE's entity marks ({self.get_starttag_text()!r})")

    def handle_endtag(self, tag) -> None:
        if tag != "span" or not self.open_marks:
            raise MarkupError(f"</{tag}> closes no entity mark")
        _, start = self.open_marks.pop()
        self.names.append(_rendered("".join(self.parts[start:])))

    def handle_data(self, data) -> None:
        self.parts.append(data)

    def handle_comment(self, data) -> None:
        raise MarkupError("an HTML comment")

    def handle_decl(self, decl) -> None:
        raise MarkupError(f"an HTML declaration ({decl[:40]!r})")

    def handle_pi(self, data) -> None:
        raise MarkupError("an HTML processing instruction")

    def unknown_decl(self, data) -> None:
        raise MarkupError("an HTML declaration")
