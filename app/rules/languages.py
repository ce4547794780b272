"""Document languages: BCP 47 tags checked, and the writing direction a tag implies. Pure.

A document's ``language`` is a BCP 47 tag (RFC 5646: ``ar``, ``he``, ``zh-Hans``,
``sr-Latn-RS``). Well-formedness is checked by ``langcodes`` (a maintained implementation
of BCP 47 parsing), which also knows the likely script of a bare language from CLDR's
likely-subtags data (``ar`` -> Arab, ``ur`` -> Arab, ``he`` -> Hebr, ``zh`` -> Hans). The
direction follows from the script: right-to-left for the scripts in RTL_SCRIPTS.
docs/languages.md describes how the pages and the sentence splitter use it.
"""

from __future__ import annotations

import re

import langcodes

MAX_TAG_LENGTH = 35  # RFC 5646 section 4.4.1: 35 characters hold every useful tag
# ISO 15924 codes of the scripts written right to left (Unicode's bidi class R or AL).
RTL_SCRIPTS = frozenset(
    "Adlm Arab Aran Armi Avst Cprt Hebr Hung Khar Lydi Mand Mani Mend Narb Nbat Nkoo Orkh "
    "Palm Phli Phlp Phnx Prti Rohg Samr Sarb Sogd Sogo Syrc Thaa Yezi".split()
)
# langcodes also accepts "_" and other spellings; the stored tag must be BCP 47 itself.
_TAG_CHARACTERS = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


def language_problem(tag: object) -> str | None:
    """Why `tag` is not a usable BCP 47 language tag, or None when it is."""
    if not isinstance(tag, str):
        return "must be a string (a BCP 47 tag such as ar, he or zh-Hans)"
    if not tag:
        return "empty (give a BCP 47 tag such as ar, he or zh-Hans, or leave it out)"
    if len(tag) > MAX_TAG_LENGTH:
        return f"too long ({len(tag)} characters, at most {MAX_TAG_LENGTH})"
    if not _TAG_CHARACTERS.fullmatch(tag) or not langcodes.tag_is_valid(tag):
        return f"{tag!r} is not a BCP 47 language tag (such as ar, he, zh-Hans or en-GB)"
    return None


def script_of(tag: str) -> str:
    """The ISO 15924 script of a valid tag: its own script subtag, else the likely one."""
    return langcodes.Language.get(tag).maximize().script or "Zyyy"


def direction_of(tag: str | None) -> str | None:
    """The text direction ("rtl" or "ltr") of a valid tag; None without a language."""
    if tag is None:
        return None
    return "rtl" if script_of(tag) in RTL_SCRIPTS else "ltr"


def primary_subtag(tag: str | None) -> str | None:
    """The language subtag in lower case (``zh`` for ``zh-Hans``), or None."""
    return tag.split("-", 1)[0].lower() if tag else None
