"""The URL map as the security suite walks it: every route, the access rules of its family,
and a URL filled with a World's values, so that new routes are covered automatically (a
route the suite cannot classify fails the suite)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.extensions import db
from app.models import AnnotationSession

UPLOAD_ID = 999


@dataclass
class World:
    """Everything a route might need, per actor."""

    document_id: str
    document_pk: int
    owner_token: str
    other_token: str
    owner_annotation: str
    other_annotation: str
    round_name: str
    validator_token: str
    other_validator_token: str


def route_family(rule: str) -> str:
    """Which access rules apply to a URL rule. New prefixes must be classified here."""
    if rule.startswith("/research/login"):
        return "public"
    if rule.startswith("/research/"):
        return "researcher"
    if rule.startswith(("/api/sessions/<token>", "/s/<token>")):
        return "worker-token"
    if rule.startswith(("/api/validators/<token>", "/v/<token>")):
        return "validator-token"
    if rule in {"/", "/healthz", "/start", "/api/openapi.json"} or rule.startswith(
        ("/annotate/<", "/id=<", "/validate/<", "/static/", "/study/<slug>/")
    ):
        return "public"
    raise AssertionError(f"route {rule} is not classified in tests/support/routes.py")


def url_for_rule(rule: str, world: World, *, token: str | None = None) -> str:
    """Fill a rule's variables with the world's values (or `token` for <token>)."""
    family = route_family(rule)
    default_token = world.validator_token if family == "validator-token" else world.owner_token
    values = {
        "token": token or default_token,
        "document_id": world.document_id,
        "annotation_id": world.owner_annotation,
        "suggestion_id": "no-such-suggestion",  # the checks answer before the lookup
        "round_name": world.round_name,
        "name": world.round_name,
        "filename": "css/base.css",
        "conflict_id": 999,  # none: the login comes first, a researcher gets a 404
        "upload_id": UPLOAD_ID,  # the world's finished upload (tests/security/conftest.py)
        "what": "annotations",  # /research/export/<what>.<fmt>: one of the table's exports
        "fmt": "csv",
        "slug": "default",  # /study/<slug>/...: the default study, where the world lives
    }

    def fill(match: re.Match) -> str:
        converter, _, name = match.group(1).rpartition(":")
        if converter == "int" and name == "document_id":
            return str(world.document_pk)
        if converter == "int" and name == "session_id":  # the owner's session, by its pk
            owner = db.select(AnnotationSession.id).filter_by(token=world.owner_token)
            return str(db.session.scalar(owner))
        if name not in values:
            raise AssertionError(f"no sample value for <{name}> in {rule}")
        return str(values[name])

    return re.sub(r"<([^>]+)>", fill, rule)


def rules(app) -> list[tuple[str, list[str]]]:
    """Every URL rule with its methods (without HEAD/OPTIONS)."""
    return [
        (rule.rule, sorted(rule.methods - {"HEAD", "OPTIONS"})) for rule in app.url_map.iter_rules()
    ]


# How many rules the security suite's URL map had when the walks were written (43; 32
# answer GET, 16 take a write). A walk that visits fewer lost routes: it must fail rather
# than pass vacuously. Raise the numbers when routes are added.
AT_LEAST = {None: 43, "GET": 32, "write": 16}
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def assert_walked(app, walked: list[str], kind: str | None = None) -> None:
    """A walk visited every rule of the URL map (of a `kind`: "GET" pages, or "write"
    routes), and the map has at least AT_LEAST[kind] of them. `walked`: the rules the
    walk visited (a rule may be visited more than once)."""
    wanted = {"GET": {"GET"}, "write": WRITE_METHODS, None: None}[kind]
    expected = {rule for rule, methods in rules(app) if wanted is None or wanted & set(methods)}
    assert set(walked) == expected, sorted(expected ^ set(walked))
    assert len(expected) >= AT_LEAST[kind], (kind, len(expected))
