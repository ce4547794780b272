"""The front end's style rules, read from the files (no browser):

- `js-` classes are behaviour hooks only: no CSS rule selects one, so restyling a page
  never breaks its script and renaming a hook never changes a look.
- Every colour is a named custom property in static/css/base.css's `:root`; the other
  stylesheets and the ES modules use `var(--…)` (the category colours come from the
  taxonomy as data and are not literals here).
- The pages workers and validators see do not load the researcher console's
  static/css/research.css (what they share lives in base.css).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CSS = ROOT / "static" / "css"
JS = ROOT / "static" / "js"
TEMPLATES = ROOT / "templates"
BASE_CSS = CSS / "base.css"

COMMENT = re.compile(r"/\*.*?\*/", re.S)
# A selector list: the text before a `{` back to the previous `{`, `}` or `;`.
PRELUDE = re.compile(r"([^{};]+)\{")
JS_CLASS = re.compile(r"\.js-[\w-]*")
# Colour literals: #rgb, #rgba, #rrggbb, #rrggbbaa, and the colour functions.
HEX = r"(?<![\w-])#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})(?![\w-])"
FUNCTION = r"\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch)\("
NAMED = r"(?<![\w-])(?:white|black|red|green|blue|gr[ae]y|silver|yellow|orange|purple)(?![\w-])"
COLOUR = re.compile(f"{HEX}|{FUNCTION}|{NAMED}", re.I)
JS_COLOUR = re.compile(f"{HEX}|{FUNCTION}", re.I)
ROOT_BLOCK = re.compile(r":root\s*\{(.*?)\}", re.S)
CUSTOM_PROPERTY = re.compile(r"^\s*--[\w-]+\s*:", re.M)

EXTENDS = re.compile(r"""\{%-?\s*extends\s+["']([^"']+)["']""")
INCLUDES = re.compile(r"""\{%-?\s*(?:include|import|from)\s+["']([^"']+)["']""")
STYLESHEET = re.compile(r"""static_url\(\s*["']css/([\w.-]+\.css)["']\s*\)""")
# The researcher console's templates (research/, studies/) and the pages only researchers open.
CONSOLE_TEMPLATES = {"main/index.html", "training/_dashboard.html"}


def stylesheets() -> list[Path]:
    return sorted(CSS.glob("*.css"))


def css_text(path: Path) -> str:
    return COMMENT.sub("", path.read_text(encoding="utf-8"))


def styled_js_classes(css: str) -> list[str]:
    """The selectors of a stylesheet that name a `js-` class."""
    return [
        " ".join(prelude.split())
        for prelude in PRELUDE.findall(COMMENT.sub("", css))
        if JS_CLASS.search(prelude)
    ]


def colour_literals(css: str, *, base: bool = False) -> list[str]:
    """The lines of a stylesheet with a colour literal; in base.css only the custom
    properties of `:root` may hold one."""
    css = COMMENT.sub("", css)
    if base:
        css = ROOT_BLOCK.sub(
            lambda block: (
                ":root {"
                + "\n".join(
                    line for line in block.group(1).splitlines() if not CUSTOM_PROPERTY.match(line)
                )
                + "}"
            ),
            css,
        )
    return [" ".join(line.split()) for line in css.splitlines() if COLOUR.search(line)]


def test_the_checks_can_fail():
    """Each check finds what it looks for, in the shapes the stylesheets write."""
    assert styled_js_classes(".step--add .js-add { min-width: 6rem; }") == [".step--add .js-add"]
    assert styled_js_classes("/* .js-x {} */ .js-hook:focus,\n.b { color: var(--text); }") == [
        ".js-hook:focus, .b"
    ]
    assert styled_js_classes(".tabs-js { } .x[data-js='y'] { }") == []
    css = ".a { color: #1f2328; } .b { fill: rgb(0 0 0 / 20%); } .c { outline-color: white; }"
    assert len(colour_literals(css)) == 1  # one line
    assert colour_literals(".a {\n  color: #fff;\n}") == ["color: #fff;"]
    assert colour_literals(".a {\n  background: var(--cat-color, #ccc);\n}") == [
        "background: var(--cat-color, #ccc);"
    ]
    assert colour_literals(".a {\n  box-shadow: 0 0 2px hsl(0 0% 0%);\n}") != []
    assert colour_literals("#main {\n  color: var(--text);\n}") == []
    base = ":root {\n  --text: #1f2328;\n}\n.hl {\n  background: var(--hl, #eee);\n}"
    assert colour_literals(base, base=True) == ["background: var(--hl, #eee);"]
    assert JS_COLOUR.search("const SPAN_COLOR = '#ffe08a';")
    assert JS_COLOUR.search("const EDGE = 'rgb(0 0 0 / 55%)';")
    assert not JS_COLOUR.search("$root.querySelector('#feedback-heading')")


@pytest.mark.parametrize("path", stylesheets(), ids=lambda path: path.name)
def test_no_js_class_is_styled(path):
    assert styled_js_classes(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", stylesheets(), ids=lambda path: path.name)
def test_colours_are_named_once_in_base_css(path):
    css = path.read_text(encoding="utf-8")
    assert colour_literals(css, base=path == BASE_CSS) == []


@pytest.mark.parametrize(
    "path",
    sorted(JS.rglob("*.mjs")),
    ids=lambda path: path.relative_to(JS).as_posix(),
)
def test_modules_take_colours_from_css(path):
    """A module names a colour as `var(--…)` (or sets a class); only the taxonomy's
    category colours, which are data, reach the page as values."""
    source = COMMENT.sub("", path.read_text(encoding="utf-8"))
    source = re.sub(r"^\s*//.*$", "", source, flags=re.M)
    assert [" ".join(line.split()) for line in source.splitlines() if JS_COLOUR.search(line)] == []


@cache
def linked_stylesheets(name: str) -> frozenset[str]:
    """The stylesheets a template links, with those of the templates it extends or includes."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    linked = set(STYLESHEET.findall(text))
    for parent in EXTENDS.findall(text) + INCLUDES.findall(text):
        linked |= linked_stylesheets(parent)
    return frozenset(linked)


WORKER_TEMPLATES = sorted(
    name
    for name in (path.relative_to(TEMPLATES).as_posix() for path in TEMPLATES.rglob("*.html"))
    if not name.startswith(("research/", "studies/")) and name not in CONSOLE_TEMPLATES
)


def test_the_template_walk_sees_inherited_stylesheets():
    assert "research.css" in linked_stylesheets("research/dashboard.html")
    assert {"base.css", "annotator.css", "practice.css"} <= linked_stylesheets(
        "training/practice.html"
    )
    assert "annotate/session.html" in WORKER_TEMPLATES
    assert "assignment/preview.html" in WORKER_TEMPLATES


@pytest.mark.parametrize("name", WORKER_TEMPLATES)
def test_worker_pages_do_not_load_the_console_stylesheet(name):
    assert "research.css" not in linked_stylesheets(name)
