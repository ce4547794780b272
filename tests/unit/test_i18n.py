"""The interface catalogues (docs/i18n.md): every worker-visible string is in every shipped
language, translated (not empty, not the English again outside an allow-list), with the
same placeholders and markup; the compiled .mo files match their .po; the templates and ES
modules that workers and validators see have no text outside gettext."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from app.core.i18n import (
    INTERFACE_LANGUAGES,
    TRANSLATIONS,
    html_lang,
    interface_locale,
    text_direction,
)
from app.taxonomy import TaxonomyError, load_taxonomy
from tests.support.taxonomies import taxonomy_variant

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = [name for name in INTERFACE_LANGUAGES if name != "en"]
# Strings that may read the same as English: names, numbers, and words the language spells
# the same. Keyed by (language, msgid).
SAME_AS_ENGLISH = {("de", "(optional)"), ("es", "Error:")}
# The same extraction as `make i18n-extract` (babel.cfg, babel-js.cfg), run on the source.
DOMAINS = {
    "messages": (
        (
            "app",
            [("**.py", "python")],
            {},
            {"_": None, "gettext": None, "lazy_gettext": None, "N_": None},
        ),
        ("templates", [("**.html", "jinja2")], {"**.html": {"trimmed": "true"}}, {"_": None}),
    ),
    "js": (("static/js", [("**.mjs", "javascript")], {}, {"t": None}),),
}
# Every template but the researcher console's, which stays English (docs/i18n.md): a new
# worker page is checked without being listed here.
CONSOLE_TEMPLATES = {
    "main/index.html",  # the development-only document list
    "training/_dashboard.html",  # the research dashboard's training panel
}
WORKER_TEMPLATES = sorted(
    name
    for name in (
        path.relative_to(ROOT / "templates").as_posix()
        for path in (ROOT / "templates").rglob("*.html")
    )
    # research/ and studies/ (the console's studies pages, docs/studies.md) are the console's
    if not name.startswith(("research/", "studies/")) and name not in CONSOLE_TEMPLATES
)
# The ES modules of worker and validator pages (the researcher's, research/ and adjudicate/,
# stay English).
WORKER_MODULES = sorted(
    path.relative_to(ROOT / "static" / "js").as_posix()
    for path in (ROOT / "static" / "js").rglob("*.mjs")
    if path.parent.name not in {"research", "adjudicate"}
)
# A string literal put straight into the page's text or an accessible name: it must come
# from t() instead. Only these sinks are checked (a heuristic, not a parser).
JS_SINK = re.compile(
    r"""(?:\.(?:textContent|innerText|title|placeholder|ariaLabel|alt)\s*=\s*"""
    r"""|\.setStatus\(\s*"""
    r"""|\.setAttribute\(\s*'(?:aria-label|title|placeholder|alt)'\s*,\s*"""
    # lib/dom.mjs's builders: element(tag, className, text), ownDirection(tag, text), button(label)
    r"""|\belement\(\s*'\w+'\s*,\s*(?:'[^']*'|`[^`]*`|[\w.]+)\s*,\s*"""
    r"""|\bownDirection\(\s*'\w+'\s*,\s*"""
    r"""|\bbutton\(\s*)"""
    r"""(['"`])((?:\\.|(?!\1).)*)\1""",
    re.S,
)
JS_TEXT_TABLE = re.compile(
    r"^(?:export )?const (?:TEXT|MESSAGES|REFUSALS) = \{(.*?)^\};", re.M | re.S
)
JS_TABLE_LITERAL = re.compile(r"""^\s*\w+:\s*(['"`])((?:\\.|(?!\1).)*)\1""", re.M)
PLACEHOLDER = re.compile(r"\{\w+\}|%\(\w+\)s")
TAG = re.compile(r"</?[a-z]+")


@cache
def source_messages(domain: str) -> frozenset[str]:
    """Every msgid the source code marks for translation in this domain."""
    found = set()
    for folder, method_map, options_map, keywords in DOMAINS[domain]:
        for _file, _line, message, _comments, _context in extract_from_dir(
            str(ROOT / folder), method_map, options_map, keywords
        ):
            found.add(message if isinstance(message, str) else message[0])
    return frozenset(found)


def catalogue(language: str, domain: str):
    with (TRANSLATIONS / language / "LC_MESSAGES" / f"{domain}.po").open("rb") as file:
        return read_po(file, locale=language)


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_source_string_is_translated(language, domain):
    messages = {m.id: m for m in catalogue(language, domain) if m.id}
    problems = []
    for msgid in sorted(source_messages(domain)):
        message = messages.get(msgid)
        if message is None:
            problems.append(f"missing (make i18n-update): {msgid!r}")
        elif not message.string or message.fuzzy:
            problems.append(f"empty or fuzzy: {msgid!r}")
        elif message.string == msgid and (language, msgid) not in SAME_AS_ENGLISH:
            problems.append(f"same as English: {msgid!r}")
        elif sorted(PLACEHOLDER.findall(message.string)) != sorted(PLACEHOLDER.findall(msgid)):
            problems.append(f"placeholders differ: {msgid!r} -> {message.string!r}")
        elif sorted(TAG.findall(message.string)) != sorted(TAG.findall(msgid)):
            problems.append(f"markup differs: {msgid!r} -> {message.string!r}")
    assert not problems, f"{language} {domain}.po:\n" + "\n".join(problems)


@pytest.mark.parametrize("language", LANGUAGES)
def test_compiled_catalogues_match_their_po(language):
    """The committed .mo files are what `make i18n-compile` makes of the .po files."""
    po = {m.id: m.string for m in catalogue(language, "messages") if m.id}
    with (TRANSLATIONS / language / "LC_MESSAGES" / "messages.mo").open("rb") as file:
        mo = {m.id: m.string for m in read_mo(file) if m.id}
    assert mo == po, "run `make i18n-compile` and commit the .mo files"


def test_shipped_languages_are_the_translation_folders():
    folders = sorted(p.name for p in TRANSLATIONS.iterdir() if p.is_dir())
    assert folders == sorted(LANGUAGES)


def visible_text(template: str) -> list[str]:
    """Words a template shows that do not go through gettext (tags, Jinja and `trans` gone)."""
    text = re.sub(r"\{#.*?#\}", "", template, flags=re.S)
    text = re.sub(r"\{%-? trans\b.*?endtrans -?%\}", "", text, flags=re.S)
    text = re.sub(r"<script\b.*?</script>", "", text, flags=re.S)
    text = re.sub(r"\{% block body_class %\}.*?\{% endblock %\}", "", text)  # a class name
    attributes = re.findall(r'\b(?:aria-label|placeholder|title|alt)="([^"]*)"', text)
    # A block that fills in a tag's attributes (checked just above), not text.
    text = re.sub(r"\{% block annotator_region %\}.*?\{% endblock %\}", "", text)
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", text)
    words = [w for w in (*attributes, *text.split()) if "{{" not in w and re.search(r"[A-Za-z]", w)]
    return [w for w in words if w not in {"FALTE", "&amp;sig="}]


@pytest.mark.parametrize("name", WORKER_TEMPLATES)
def test_worker_templates_show_no_text_outside_gettext(name):
    template = (ROOT / "templates" / name).read_text(encoding="utf-8")
    assert visible_text(template) == []


def untranslated_literals(source: str) -> list[str]:
    """String literals a module puts straight into visible text or an accessible name, or
    into its table of worker-visible text (`const TEXT = {...}`, STYLE.md's "one place per
    file") without t(); `${...}` parts removed: a literal of placeholders only is fine."""
    literals = [literal for _quote, literal in JS_SINK.findall(source)]
    for table in JS_TEXT_TABLE.findall(source):
        literals += [literal for _quote, literal in JS_TABLE_LITERAL.findall(table)]
    return [
        literal
        for literal in literals
        if re.search(r"[A-Za-z]", re.sub(r"\$\{[^}]*\}", "", literal))
    ]


def test_the_js_check_finds_a_literal():
    """The heuristic below can fail: it sees the sinks as the modules write them."""
    assert untranslated_literals("$a.textContent = 'Found';") == ["Found"]
    assert untranslated_literals("this.$check.title = last ? '' : TEXT.x;") == []
    assert untranslated_literals("$el.setAttribute('aria-label', `Row ${n}`);") == ["Row ${n}"]
    assert untranslated_literals("this.annotator.setStatus('Checking…');") == ["Checking…"]
    assert untranslated_literals("$s.textContent = `${LABEL} ${value}`;") == []
    assert untranslated_literals("element('p', 'hint', 'Saved');") == ["Saved"]
    assert untranslated_literals("element('li', `item--${kind}`, 'Found');") == ["Found"]
    assert untranslated_literals("ownDirection('q', 'Quoted', 'x');") == ["Quoted"]
    assert untranslated_literals("button('Remove', 'button', { action: 'x' });") == ["Remove"]
    assert untranslated_literals("element('p', 'hint', TEXT.saved); button(t('Add'), 'b');") == []
    table = "const TEXT = {\n  found: t('Found'),\n  missed: 'Missed',\n  long:\n    'Go on.',\n};"
    assert untranslated_literals(table) == ["Missed", "Go on."]


@pytest.mark.parametrize("name", WORKER_MODULES)
def test_worker_modules_show_no_literal_outside_t(name):
    source = (ROOT / "static" / "js" / name).read_text(encoding="utf-8")
    assert untranslated_literals(source) == []


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("de", "de"),
        ("de-AT", "de"),
        ("ES-419", "es"),
        ("ar-EG", "ar"),
        ("zh", "zh_Hans"),
        ("zh-Hans", "zh_Hans"),
        ("zh-Hans-CN", "zh_Hans"),
        ("zh_CN", "zh_Hans"),
        ("zh-TW", None),
        ("zh-Hant", None),
        ("fr", None),
        ("en-GB", "en"),
    ],
)
def test_interface_locale_of_a_bcp47_tag(tag, expected):
    assert interface_locale(tag) == expected


def test_html_lang_and_direction():
    assert html_lang("zh_Hans") == "zh-Hans"
    assert text_direction("ar") == "rtl"
    assert text_direction("zh_Hans") == text_direction("de") == "ltr"


def taxonomy_with_language(tmp_path, value: str) -> Path:
    return taxonomy_variant(tmp_path, study_lines=f"  language: {value}\n")


def test_study_language_is_read_as_a_shipped_locale(tmp_path):
    assert load_taxonomy(taxonomy_with_language(tmp_path, "zh-Hans")).study.language == "zh_Hans"
    assert load_taxonomy(taxonomy_with_language(tmp_path, "ar")).study.language == "ar"
    assert load_taxonomy(ROOT / "config" / "taxonomy.yaml").study.language is None


def test_an_unshipped_study_language_is_refused_with_its_line(tmp_path):
    path = taxonomy_with_language(tmp_path, "fr")
    with pytest.raises(TaxonomyError) as error:
        load_taxonomy(path)
    line = path.read_text(encoding="utf-8").splitlines().index("  language: fr") + 1
    assert [str(p) for p in error.value.problems] == [
        f"{path}:{line}: study.language: must be an interface language shipped here "
        "(en, de, es, ar, zh-Hans), got 'fr'"
    ]
