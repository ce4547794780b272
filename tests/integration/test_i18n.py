"""Which interface language a page is in (app/core/i18n.py): the study's `language`, else the
browser's Accept-Language among the shipped languages, else English; the researcher
console stays English."""

from __future__ import annotations

import html as html_module
import json
import re

import pytest

from app.imports.document_store import DocumentInput, import_documents


def open_task(app, accept_language: str | None = None) -> str:
    """The annotator page's HTML for a new worker, with this Accept-Language header."""
    with app.app_context():
        import_documents([DocumentInput("doc-1", "A title", ("Anna met Bob.", "Then it rained."))])
    headers = {"Accept-Language": accept_language} if accept_language else {}
    client = app.test_client()
    start = client.get("/annotate/doc-1?annotator=w1", headers=headers)
    assert start.status_code == 302
    page = client.get(start.headers["Location"], headers=headers)
    assert page.status_code == 200
    return page.get_data(as_text=True)


def html_attributes(html: str) -> tuple[str, str]:
    match = re.search(r'<html lang="([^"]+)" dir="([^"]+)"', html)
    assert match, html[:200]
    return match.group(1), match.group(2)


def js_messages(html: str) -> dict[str, str]:
    match = re.search(r"<html [^>]*data-i18n='([^']*)'>", html)
    assert match
    return json.loads(html_module.unescape(match.group(1)))


@pytest.mark.parametrize(
    ("accept_language", "lang", "heading"),
    [
        (None, "en", "Current Paragraph"),
        ("de-AT,de;q=0.9,en;q=0.5", "de", "Aktueller Absatz"),
        ("fr-FR,fr;q=0.9,es;q=0.8,en;q=0.7", "es", "Párrafo actual"),  # first shipped one
        ("zh-CN,zh;q=0.9", "zh-Hans", "当前段落"),
        ("zh-TW", "en", "Current Paragraph"),  # Traditional Chinese is not shipped
        ("fr", "en", "Current Paragraph"),
        ("en-GB,de;q=0.9", "en", "Current Paragraph"),
    ],
)
def test_the_browser_language_picks_among_the_shipped_ones(
    make_app, accept_language, lang, heading
):
    html = open_task(make_app(), accept_language)
    assert html_attributes(html) == (lang, "ltr")
    assert f'<h2 id="current-heading" class="text-box__heading">{heading}</h2>' in html
    assert bool(js_messages(html)) is (lang != "en")


def test_the_study_language_wins_over_the_browser(make_app):
    html = open_task(make_app(language="ar"), "de,en;q=0.5")
    assert html_attributes(html) == ("ar", "rtl")
    assert "الفقرة الحالية" in html
    assert js_messages(html)["Saved"] == "تم الحفظ"
    # The taxonomy's own texts are the researcher's and stay as written.
    assert "New person not introduced" in html


def test_the_researcher_console_stays_english(make_app):
    client = make_app(language="ar").test_client()
    html = client.get("/research/login", headers={"Accept-Language": "ar"}).get_data(as_text=True)
    assert html_attributes(html) == ("en", "ltr")
    assert js_messages(html) == {}


def test_a_refusal_page_is_translated(make_app):
    client = make_app().test_client()
    response = client.get("/start?annotator=someone&sig=0", headers={"Accept-Language": "es"})
    assert response.status_code == 403
    assert "Este enlace personal no es válido aquí" in response.get_data(as_text=True)


def test_an_error_page_message_from_python_is_translated(make_app):
    client = make_app().test_client()
    response = client.get("/s/no-such-token", headers={"Accept-Language": "de"})
    assert response.status_code == 404
    assert "Dieser Annotationslink führt zu keiner Aufgabe." in response.get_data(as_text=True)


SAME = "100% sure|100% sure|<kbd>Enter</kbd> &lt;b&gt;"  # not in the catalogues


@pytest.mark.parametrize(
    ("accept_language", "expected"),
    [
        (None, "Paragraph &lt;b&gt; of 2|Paragraph &lt;i&gt; of 3|" + SAME),
        ("de", "Absatz &lt;b&gt; von 2|Absatz &lt;i&gt; von 3|" + SAME),
    ],
)
def test_template_gettext_translates_escapes_its_arguments_and_formats_once(
    make_app, accept_language, expected
):
    """The template callables (app/core/i18n.py) behave as Jinja's newstyle gettext: the
    translation is markup, its arguments are escaped, a `%` is formatted once (`%%` in
    `_()`, `%` in `{% trans %}`, which doubles it); inside a
    block that sets a variable too (where Jinja's own would copy the context)."""
    from flask import render_template_string

    app = make_app()
    headers = {"Accept-Language": accept_language} if accept_language else {}
    source = (
        "{% block b %}{% set x = 1 %}{{ _('Paragraph %(n)s of %(total)s', n='<b>', total=2) }}|"
        "{{ gettext('Paragraph %(n)s of %(total)s', n='<i>', total=x + 2) }}|"
        "{% trans %}100% sure{% endtrans %}|{{ _('100%% sure') }}|"
        "{% trans who='<b>' %}<kbd>Enter</kbd> {{ who }}{% endtrans %}{% endblock %}"
    )
    with app.test_request_context("/s/x", headers=headers):
        assert render_template_string(source) == expected
