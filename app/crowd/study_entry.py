"""Which study a worker's start link enters, and whether it may (issue 30).

`/study/<slug>/start`, `/study/<slug>/annotate/<document_id>` and
`/study/<slug>/validate/<round>` name their study; the unprefixed addresses (`/start`,
`/annotate/...`, `/id=...`, `/validate/...`) enter the default study. An unknown slug is
a 404 page. A closed or archived study opens nothing: a page says so (status 410), with
the way back to the platform; its data stays. A draft opens only signed annotator links
(the researchers trying it); any other arrival gets the same page, saying it is not open
yet. Pages of a session already opened (`/s/<token>`, `/v/<token>`) keep working whatever
the status: a worker who began may finish.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, current_app, render_template, request
from flask.typing import ResponseReturnValue

from app.core.extensions import db
from app.core.persistence import end_orm_transaction
from app.crowd.settings import study_settings
from app.models import Study
from app.rules.outcomes import CODE_PLACEHOLDER
from app.rules.studies import StudyStatus, accepts_new_workers
from app.studies import study_of_link, use_study

KIND_ENTRIES = "falte_study_entries"  # app.extensions: study kind -> its start view

KindEntry = Callable[[Study], ResponseReturnValue]


def register_kind_entry(app: Flask, kind: str, entry: KindEntry) -> None:
    """Make `entry(study)` answer the start link of every study of this kind."""
    app.extensions.setdefault(KIND_ENTRIES, {})[kind] = entry


def kind_entry(study: Study) -> KindEntry | None:
    """The start view registered for the study's kind; None: the annotation start."""
    return current_app.extensions.get(KIND_ENTRIES, {}).get(study.kind)


class StudyUnavailable(Exception):
    """The start link's study does not exist (404) or takes no workers now (410)."""

    def __init__(self, status: int, study: Study | None, slug: str) -> None:
        super().__init__(slug)
        self.status = status
        self.study = study
        self.slug = slug


def enter_study(slug: str | None) -> Study:
    """The study of this start link (the default study without a slug), made the current
    study; StudyUnavailable when there is none or it is closed or archived."""
    return admit_study(study_of_link(slug), slug)


def admit_study(study: Study | None, slug: str | None) -> Study:
    """Make the study a start link found (study_of_link, or read with what the link opens)
    the current study; StudyUnavailable when there is none or it is closed or archived."""
    # A worker's first open is one statement on the autocommit connection
    # (app.annotate.opening): leave no ORM transaction open behind the lookup.
    end_orm_transaction()
    if study is None:
        raise StudyUnavailable(404, None, slug or "")
    use_study(study)
    if study.status in (StudyStatus.CLOSED, StudyStatus.ARCHIVED):
        raise StudyUnavailable(410, study, study.slug)
    return study


def admit_platform(study: Study, platform: str) -> None:
    """StudyUnavailable unless the study takes this arrival: an open study anyone, a
    draft only a signed annotator link (platform `direct`)."""
    if not accepts_new_workers(study.status) and platform != "direct":
        raise StudyUnavailable(410, study, study.slug)


def unavailable_page(exc: StudyUnavailable):
    """The page of a study that opens nothing (its handler in every start link's blueprint)."""
    db.session.rollback()
    page = render_template(
        "assignment/study_unavailable.html",
        study=exc.study,
        slug=exc.slug,
        status=exc.study.status if exc.study is not None else None,
        exit_url=return_address() if exc.study is not None else None,
    )
    return page, exc.status, {"Cache-Control": "no-store"}


def return_address() -> str | None:
    """Where a worker the current study has nothing for (and no session) goes back to.

    A Prolific worker is asked to return the submission: the study's no_consent address
    (its action on Prolific is "ask for a return"), when it is one fixed address (a
    {code} one needs a session's own code, and there is no session). Others: None (the
    page says how to return the task)."""
    if not request.args.get("PROLIFIC_PID"):
        return None
    template = study_settings().completion_template("no_consent")
    if template and CODE_PLACEHOLDER not in template:
        return template
    return None
