"""The console's studies (issue 30, points 4 and 5; docs/studies.md): the list of a
researcher's studies and the form that creates one (its taxonomy's problems at their
lines, nothing half-written), a study's overview (status buttons for its owner, workers'
links, completion codes per outcome), sharing by e-mail, and copying a study (its
taxonomy, settings and documents; not its sessions, annotations or rounds)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from app.core.extensions import db
from app.models import (
    AnnotationSession,
    Document,
    Paragraph,
    Researcher,
    Study,
    StudyResearcher,
    TaxonomyVersion,
    ValidationRound,
    utcnow,
)
from app.studies import StudyError, default_study, role_of, study_by_slug
from app.studies.making import copy_study
from tests.support.study_console import build_world, client_of, csrf_of

FIXTURES = Path(__file__).parent.parent / "fixtures" / "studies"
CODES = """\
title: Coded study
instructions: Mark every error you find.
categories:
  - {key: unclear, name: Unclear, type: singleton, description: Hard to follow.}
study:
  completion:
    completed: C1A2B3C4
    no_consent: CN1M2L3K
"""


@pytest.fixture
def world(app, tmp_path):
    return build_world(tmp_path)


def _create(browser, **fields):
    upload = fields.pop("upload", None)
    data = {"csrf_token": csrf_of(browser), "kind": "annotation", **fields}
    if upload is not None:
        data["taxonomy"] = (io.BytesIO(upload[0]), upload[1])
    return browser.post("/research/studies/", data=data, content_type="multipart/form-data")


def _studies() -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count(Study.id)))


def test_the_list_shows_the_studies_a_researcher_has_a_role_in(app, world):
    page = client_of(app, world.people["viewer"]).get("/research/studies/")
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Alpha study" in text and "viewer" in text
    assert "beta" not in text and "Beta study" not in text
    assert ">Studies</a>" in text  # the console's header links the list


def test_create_takes_the_default_taxonomy_and_makes_the_creator_owner(app, world):
    owner = client_of(app, world.people["viewer"])
    response = _create(owner, slug="pilot-2", title="Second pilot")
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/research/studies/pilot-2/")
    study = study_by_slug("pilot-2")
    assert (study.title, study.status, study.kind) == ("Second pilot", "draft", "annotation")
    assert study.taxonomy_version == default_study().taxonomy_version
    assert role_of(study, world.people["viewer"]) == "owner"
    overview = owner.get("/research/studies/pilot-2/").get_data(as_text=True)
    assert "Created the draft study pilot-2" in overview


def test_a_broken_taxonomy_shows_its_line_and_writes_nothing(app, world):
    before = _studies()
    raw = (FIXTURES / "broken.yaml").read_bytes()
    response = _create(
        client_of(app, world.people["owner"]), slug="gamma", upload=(raw, "broken.yaml")
    )
    text = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "broken.yaml:5" in text, text  # the category without a type, at its line
    assert "no study was created" in text
    assert _studies() == before and study_by_slug("gamma") is None


@pytest.mark.parametrize(
    ("slug", "message"),
    [
        ("Bad Slug", "lower-case letters, digits and single hyphens"),
        ("alpha", "A study &#39;alpha&#39; exists already"),
        ("", "A study needs a slug"),
    ],
)
def test_a_refused_slug_is_said_and_nothing_is_written(app, world, slug, message):
    before = _studies()
    response = _create(client_of(app, world.people["owner"]), slug=slug)
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert _studies() == before


def test_a_validation_study_names_the_annotation_study_it_judges(app, world):
    owner = client_of(app, world.people["owner"])
    refused = _create(owner, slug="judge", kind="validation")
    assert refused.status_code == 400
    assert "Choose the annotation study" in refused.get_data(as_text=True)
    assert _create(owner, slug="judge", kind="validation", judges="alpha").status_code == 303
    judge = study_by_slug("judge")
    assert (judge.kind, judge.judges_study_id) == ("validation", world.alpha.id)
    # A study the researcher cannot see is no choice (beta is another owner's).
    assert _create(owner, slug="judge-2", kind="validation", judges="beta").status_code == 400


def test_the_overview_gives_the_study_links_and_codes(app, world):
    owner = client_of(app, world.people["owner"])
    assert _create(owner, slug="coded", upload=(CODES.encode(), "coded.yaml")).status_code == 303
    text = owner.get("/research/studies/coded/").get_data(as_text=True)
    assert (
        "http://localhost/study/coded/start?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
    ) in text
    assert "&lt;ExternalURL&gt;http://localhost/study/coded/start&lt;/ExternalURL&gt;" in text
    assert "<code>C1A2B3C4</code>" in text and "<code>CN1M2L3K</code>" in text
    assert 'href="/research/studies/coded/taxonomy/upload"' in text
    assert 'href="/research/studies/coded/documents"' in text
    assert 'Copy <span class="visually-hidden">Entry link of coded</span>' in text
    assert 'href="/research/studies/coded/dashboard"' in text
    # Its taxonomy page checks no file: the study's taxonomy is in the database only.
    taxonomy = owner.get("/research/studies/coded/taxonomy").get_data(as_text=True)
    assert "Coded study" in taxonomy and "The file on disk" not in taxonomy


def test_the_owner_opens_closes_and_archives(app, world):
    owner, editor = (client_of(app, world.people[r]) for r in ("owner", "editor"))
    url = "/research/studies/alpha/status"

    def change(browser, status: str):
        return browser.post(url, data={"csrf_token": csrf_of(browser), "status": status})

    assert change(owner, "archived").status_code == 303
    page = owner.get("/research/studies/alpha/").get_data(as_text=True)
    assert "A draft study cannot become archived (allowed: closed, open)." in page
    assert change(editor, "open").status_code == 403
    for status in ("open", "closed", "archived"):
        assert change(owner, status).status_code == 303
        db.session.expire_all()
        assert study_by_slug("alpha").status == status


def test_the_owner_shares_and_takes_a_role_away(app, world):
    owner = client_of(app, world.people["owner"])
    other = client_of(app, world.people["none"])
    url = "/research/studies/alpha/share"
    assert other.get("/research/studies/alpha/dashboard").status_code == 404
    form = {"csrf_token": csrf_of(owner), "email": " NONE@example.org ", "role": "viewer"}
    assert owner.post(url, data=form).status_code == 303
    assert other.get("/research/studies/alpha/dashboard").status_code == 200
    assert (
        other.post(
            "/research/studies/alpha/copy", data={"csrf_token": csrf_of(other), "new_slug": "x"}
        ).status_code
        == 403
    )  # a viewer reads, and copies nothing
    assert owner.post(url, data={**form, "role": "remove"}).status_code == 303
    assert other.get("/research/studies/alpha/dashboard").status_code == 404
    unknown = owner.post(url, data={**form, "email": "nobody@example.org"}, follow_redirects=True)
    assert "No researcher has the e-mail" in unknown.get_data(as_text=True)
    editor = client_of(app, world.people["editor"])
    assert editor.post(url, data={**form, "csrf_token": csrf_of(editor)}).status_code == 403


def test_an_editor_copies_a_study_into_a_draft_of_their_own(app, world):
    editor = client_of(app, world.people["editor"])
    form = {"csrf_token": csrf_of(editor), "new_slug": "alpha-main", "new_title": "Main"}
    response = editor.post("/research/studies/alpha/copy", data=form)
    assert response.headers["Location"].endswith("/research/studies/alpha-main/")
    copy = study_by_slug("alpha-main")
    assert (copy.title, copy.status) == ("Main", "draft")
    assert role_of(copy, world.people["editor"]) == "owner"
    assert role_of(copy, world.people["owner"]) is None
    taken = editor.post("/research/studies/alpha/copy", data=form, follow_redirects=True)
    assert "Not copied: A study &#39;alpha-main&#39; exists already" in taken.get_data(as_text=True)


def _documents(study: Study) -> list[tuple]:
    rows = db.session.execute(
        select(
            Document.external_id,
            Document.gold,
            Document.retired_at,
            Paragraph.position,
            Paragraph.text,
        )
        .join(Paragraph, Paragraph.document_id == Document.id)
        .where(Document.study_id == study.id)
        .order_by(Document.external_id, Paragraph.position)
    )
    return [tuple(row) for row in rows]


def _count(model, study: Study) -> int:
    query = select(func.count()).select_from(model).where(model.study_id == study.id)
    return db.session.scalar(query)


def test_copy_study_takes_taxonomy_settings_and_documents_only(app, world):
    source = world.alpha
    source.settings = {**source.settings, "study": {"completion": {"completed": "C1A2B3C4"}}}
    db.session.execute(
        update(Document).where(Document.study_id == source.id).values(retired_at=utcnow())
    )
    db.session.commit()
    copier = world.people["viewer"]
    copy = copy_study(source, "alpha-copy", copier)
    db.session.expire_all()
    assert (copy.kind, copy.status, copy.title) == ("annotation", "draft", "Alpha study (copy)")
    assert copy.taxonomy_version == source.taxonomy_version
    assert copy.settings == source.settings and copy.settings["study"]["completion"]
    assert _documents(copy) == _documents(source) and _documents(copy)
    assert _count(TaxonomyVersion, copy) == 1
    assert _count(AnnotationSession, copy) == 0 and _count(ValidationRound, copy) == 0
    assert _count(AnnotationSession, source) == 3
    members = db.session.scalars(select(StudyResearcher).where(StudyResearcher.study_id == copy.id))
    assert [(m.researcher_id, m.role) for m in members] == [(copier.id, "owner")]
    assert _count(Document, source) == 1  # the source's documents stay its own


def test_copy_study_refused_writes_nothing(app, world):
    documents = db.session.scalar(select(func.count(Document.id)))
    before = _studies()
    for slug in ("beta", "No Good"):
        with pytest.raises(StudyError):
            copy_study(world.alpha, slug, world.people["owner"])
    assert _studies() == before
    assert db.session.scalar(select(func.count(Document.id))) == documents


def test_create_researcher_makes_an_editor_of_the_default_study(app, runner):
    result = runner.invoke(
        args=["create-researcher", "new@example.org", "--password-stdin"],
        input="a-long-enough-password\n",
    )
    assert result.exit_code == 0, result.output
    assert "an editor of the default study" in result.output
    account = db.session.scalar(select(Researcher).filter_by(email="new@example.org"))
    assert role_of(default_study(), account) == "editor"
