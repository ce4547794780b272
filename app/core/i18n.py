"""The interface language of worker and validator pages (docs/i18n.md).

Which language: the taxonomy's `study: language:`, else the first of the browser's
Accept-Language tags that we ship, else English. Templates and Python use Flask-Babel's
gettext (catalogue `translations/<locale>/LC_MESSAGES/messages.po`, compiled to `.mo`);
the ES modules get the page's messages from `js.po` of the same folder as JSON in
`<html data-i18n>`, which static/js/lib/i18n.mjs reads. The researcher console stays English.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from babel import Locale
from babel.messages.pofile import read_po
from flask import Flask, current_app, g, request
from flask_babel import Babel, get_locale, get_translations
from markupsafe import Markup

# Babel locale names of the shipped catalogues (folders of translations/), English first:
# it is the source language and has no catalogue. Chinese is `zh_Hans`, Babel's name for
# Simplified Chinese (BCP 47 `zh-Hans`), so that a Traditional catalogue can sit beside it.
INTERFACE_LANGUAGES = ("en", "de", "es", "ar", "zh_Hans")
DEFAULT_LANGUAGE = "en"
TRANSLATIONS = Path(__file__).resolve().parents[2] / "translations"
# Blueprints of the researcher console: English whatever the study or browser says.
CONSOLE_BLUEPRINTS = frozenset({"research", "adjudication"})
# Chinese tags that mean Simplified script; zh-Hant, zh-TW, zh-HK and zh-MO do not.
_SIMPLIFIED = {"", "hans", "cn", "sg", "my"}

babel = Babel()


def N_(message: str) -> str:
    """Mark a string for `make i18n-extract` where it is translated later (gettext(var))."""
    return message


def interface_locale(tag: str) -> str | None:
    """Map a BCP 47 tag (`de-AT`, `zh-Hans-CN`, `ar`) to a shipped locale name, or None."""
    parts = tag.strip().replace("_", "-").lower().split("-")
    language = parts[0]
    if language == "zh":
        qualifiers = set(parts[1:3]) or {""}
        return "zh_Hans" if qualifiers <= _SIMPLIFIED else None
    return language if language in INTERFACE_LANGUAGES else None


def html_lang(locale: str) -> str:
    """The BCP 47 form of a locale name for `<html lang>`: `zh_Hans` -> `zh-Hans`."""
    return locale.replace("_", "-")


@lru_cache(maxsize=len(INTERFACE_LANGUAGES))
def text_direction(locale: str) -> str:
    """`rtl` for right-to-left scripts (Arabic), else `ltr`, by Babel's locale data."""
    return Locale.parse(locale).text_direction


def select_locale() -> str:
    """Flask-Babel's locale selector: console English, else study, else browser, else en."""
    if request.blueprint in CONSOLE_BLUEPRINTS:
        return DEFAULT_LANGUAGE
    study_language = current_app.extensions["taxonomy"].study.language
    if study_language:
        return study_language
    for tag, _quality in request.accept_languages:
        locale = interface_locale(tag) if tag != "*" else None
        if locale:
            return locale
    return DEFAULT_LANGUAGE


@lru_cache(maxsize=len(INTERFACE_LANGUAGES))
def js_catalogue(locale: str) -> dict[str, str]:
    """The ES modules' messages for a locale, {English: translation}; {} for English."""
    path = TRANSLATIONS / locale / "LC_MESSAGES" / "js.po"
    if locale == DEFAULT_LANGUAGE or not path.exists():
        return {}
    with path.open("rb") as file:
        catalog = read_po(file, locale=locale)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


def _template_context() -> dict[str, Any]:
    locale = str(get_locale() or DEFAULT_LANGUAGE)
    return {
        "html_lang": html_lang(locale),
        "html_dir": text_direction(locale),
        "js_messages": js_catalogue(locale),  # base.html: <html data-i18n='...|tojson'>
    }


def _translations():
    """The request's catalogue, looked up once per request: Flask-Babel's own template
    callables look the locale and domain up again for every string (the annotator page
    has about forty). Nothing here changes the locale within a request (no force_locale)."""
    try:
        return g._interface_translations
    except AttributeError:  # the request's first string
        found = g._interface_translations = get_translations()
        return found
    except RuntimeError:  # no app context: Flask-Babel's own answer (NullTranslations)
        return get_translations()


# The template callables: what Jinja's i18n extension installs with `newstyle=True` (the
# translation as Markup, then `% variables`, so its arguments are escaped), as plain
# functions. Jinja's own are `pass_context`, and a pass_context call inside a block that
# sets a variable copies the whole template context first (Context.call with
# `_block_vars`): 33 copies per annotator page, a sixth of its rendering. A translation
# without variables and without `%` is left as it is (formatting it changes nothing).
# Every template is HTML (autoescaped), so the Markup is always right.
def _formatted(translation: str, variables: dict[str, Any]) -> Markup:
    markup = Markup(translation)  # noqa: S704 (our catalogues' text, as Jinja's own gettext)
    return markup % variables if variables or "%" in markup else markup


def _gettext(message: str, **variables: Any) -> Markup:
    return _formatted(_translations().ugettext(message), variables)


def _ngettext(singular: str, plural: str, num: int, **variables: Any) -> Markup:
    variables.setdefault("num", num)
    return _formatted(_translations().ungettext(singular, plural, num), variables)


def _pgettext(context: str, message: str, **variables: Any) -> Markup:
    return _formatted(_translations().upgettext(context, message), variables)


def _npgettext(context: str, singular: str, plural: str, num: int, **variables: Any) -> Markup:
    variables.setdefault("num", num)
    return _formatted(_translations().unpgettext(context, singular, plural, num), variables)


def init_app(app: Flask) -> None:
    """Bind Flask-Babel with the locale selector and give templates lang, dir and messages."""
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT_LANGUAGE)
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    babel.init_app(app, locale_selector=select_locale)
    # The same callables as Flask-Babel installs (newstyle), on the request's catalogue.
    app.jinja_env.globals.update(
        _=_gettext,
        gettext=_gettext,
        ngettext=_ngettext,
        pgettext=_pgettext,
        npgettext=_npgettext,
    )
    app.jinja_env.newstyle_gettext = True  # `{% trans %}` leaves the `%` to the callables
    # `{% trans %}` blocks wrap their text over lines: one msgid per sentence, not per layout.
    app.jinja_env.policies["ext.i18n.trimmed"] = True
    app.context_processor(_template_context)
