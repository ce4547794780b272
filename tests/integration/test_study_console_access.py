"""Who may do what in a study's console (docs/studies.md, "Sharing"): every per-study
console endpoint (`/research/studies/<slug>/...`, GET and the writes) answers as the
researcher's role allows: an owner everything, an editor all but the status and sharing,
a viewer reads (its writes 403), a researcher without a role 404 (a study of someone else
is not revealed), an anonymous browser the login page. The default study's `/research/...`
answers by the role in the default study. Every link a per-study page draws stays in its
study."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.support.adjudication import DOC_ID
from tests.support.study_console import ROUND, build_world, client_of, csrf_of

PREFIX = "/research/studies/<slug>"
OWNER_ONLY = {f"{PREFIX}/status", f"{PREFIX}/share"}
WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# Pages that have no link of their own to check (downloads and JSON).
NOT_HTML = re.compile(r"(\.json|\.csv|/export/|/api/)")


@pytest.fixture
def world(app, tmp_path):
    return build_world(tmp_path)


def _study_rules(app) -> list[tuple[str, str]]:
    """(rule, method) of every per-study console endpoint."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(PREFIX):
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                found.append((rule.rule, method))
    return found


def _fill(rule: str, world, slug: str = "alpha") -> str:
    values = {
        "slug": slug,
        "document_id": DOC_ID,
        "session_id": world.session_id,
        "name": ROUND,
        "round_name": ROUND,
        "what": "annotations",
        "fmt": "csv",
        "conflict_id": 999,
    }
    return re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", lambda m: str(values[m[1]]), rule)


def _ask(client, method: str, url: str, token: str):
    if method == "GET":
        return client.get(url)
    headers = {"X-CSRFToken": token}
    return client.open(url, method=method, data={"csrf_token": token}, headers=headers)


def test_every_per_study_endpoint_answers_as_the_role_allows(app, world):
    rules = _study_rules(app)
    # The console's pages and the studies' own: at least these many, so that a lost
    # registration fails here rather than passing with nothing to check.
    assert len({rule for rule, _ in rules}) >= 19, rules
    assert {method for _, method in rules} >= {"GET", "POST"}
    clients = {role: client_of(app, world.people[role]) for role in world.people}
    clients["anonymous"] = client_of(app, None)
    tokens = {role: csrf_of(client) for role, client in clients.items() if role != "anonymous"}
    tokens["anonymous"] = csrf_of(clients["anonymous"], "/research/login")
    answers: dict[tuple[str, str, str], int] = {}
    for rule, method in rules:
        url = _fill(rule, world)
        for role, client in clients.items():
            response = _ask(client, method, url, tokens[role])
            answers[rule, method, role] = response.status_code
            where = (rule, method, role, response.status_code)
            if role == "anonymous":
                assert response.status_code in (302, 401), where
                if response.status_code == 302:
                    assert "/research/login" in response.headers["Location"], where
            elif role == "none":
                assert response.status_code == 404, where
            elif method == "GET":
                assert response.status_code == 200, where
            elif role == "viewer" or (role == "editor" and rule in OWNER_ONLY):
                assert response.status_code == 403, where
            else:
                assert response.status_code != 403, where
    # The writes an editor may make answer the editor as they answer the owner.
    for rule, method in rules:
        if method in WRITES and rule not in OWNER_ONLY:
            assert answers[rule, method, "editor"] == answers[rule, method, "owner"], rule


def test_a_researcher_of_one_study_reads_nothing_of_another(app, world):
    beta_owner = client_of(app, world.people["none"])
    for path in (
        "dashboard",
        "export/annotations.csv",
        "export/study-report.json",
        f"documents/{DOC_ID}/adjudicate",
        f"api/documents/{DOC_ID}/adjudication",
        f"sessions/{world.session_id}",
        "",
    ):
        assert beta_owner.get(f"/research/studies/alpha/{path}").status_code == 404, path
    # Their own study's address does not open the other study's session either.
    assert beta_owner.get(f"/research/studies/beta/sessions/{world.session_id}").status_code == 404
    own = beta_owner.get(f"/research/studies/beta/sessions/{world.beta_session_id}")
    assert own.status_code == 200


def test_the_default_study_answers_by_the_role_in_it(app, world, researcher):
    # alpha's owner has no role in the default study; the fixture's researcher is an
    # editor of it, as `flask create-researcher` makes every new researcher.
    assert client_of(app, world.people["owner"]).get("/research/").status_code == 404
    assert client_of(app, researcher).get("/research/").status_code == 200
    assert client_of(app, researcher).get("/research/studies/alpha/dashboard").status_code == 404


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "action") and value and value.startswith("/research"):
                self.found.append(value)


def test_every_link_of_a_per_study_page_stays_in_its_study(app, world):
    client = client_of(app, world.people["owner"])
    pages = [
        _fill(rule, world)
        for rule, method in _study_rules(app)
        if method == "GET" and not NOT_HTML.search(rule)
    ]
    assert len(pages) >= 10, pages
    walked = set()
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        parser = _Links()
        parser.feed(response.get_data(as_text=True))
        assert parser.found, page
        for link in parser.found:
            walked.add(link)
            outside = not link.startswith("/research/studies/alpha/")
            assert not outside or link in ("/research/studies/", "/research/logout"), (page, link)
    # Every console page of the study is linked from them (the nav and the overview).
    for name in ("dashboard", "study", "taxonomy", "rounds", "analyses", "export/annotations.csv"):
        assert f"/research/studies/alpha/{name}" in walked, name
