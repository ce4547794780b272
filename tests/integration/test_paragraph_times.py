"""Time per paragraph: visits recorded on page open and moves (both write paths), the
paragraphs export (CLI and download), and the dashboard's rushing flag."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from sqlalchemy import update

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import ParagraphTiming
from tests.support.studies import use_taxonomy
from tests.support.worker_api import csrf, start, submit

# 4, 3 and 2 words.
PARAGRAPHS = ("Anna met Bob there.", "They talked long.", "It rained.")


@pytest.fixture
def document(app):
    import_documents([DocumentInput("doc-1", None, PARAGRAPHS)])
    db.session.commit()


def move(client, token: str, paragraph_id: int, **extra):
    answer = client.put(
        f"/api/sessions/{token}/position",
        json={"paragraph_id": paragraph_id, **extra},
        headers=csrf(token),
    )
    assert answer.status_code == 200, answer.data
    return answer


def timings() -> dict[int, ParagraphTiming]:
    db.session.expire_all()
    rows = db.session.scalars(db.select(ParagraphTiming)).all()
    return {row.paragraph_id: row for row in rows}


def earlier(paragraph_id: int, seconds: float) -> None:
    """Pretend the open visit of a paragraph began `seconds` earlier."""
    db.session.execute(
        update(ParagraphTiming)
        .where(ParagraphTiming.paragraph_id == paragraph_id)
        .values(visit_started=ParagraphTiming.visit_started - seconds)
    )
    db.session.commit()


def test_visits_are_recorded_on_page_open_and_moves(app, client, document):
    token = start(client, "doc-1", annotator="reader")
    assert client.get(f"/s/{token}").status_code == 200
    opened = timings()
    assert list(opened) == [0] and opened[0].visit_started is not None
    earlier(0, 30)
    move(client, token, 1, active_seconds=12.5)
    rows = timings()
    assert rows[0].visit_started is None and rows[0].left_at is not None
    assert rows[0].seconds_visible == pytest.approx(30, abs=2)
    assert rows[0].active_seconds == 12.5
    assert rows[1].visit_started is not None and rows[1].seconds_visible == 0
    # The page cannot claim more active time than the paragraph was shown.
    earlier(1, 5)
    move(client, token, 0, active_seconds=500)
    rows = timings()
    assert rows[1].active_seconds == pytest.approx(5, abs=2)
    assert rows[1].seconds_visible == pytest.approx(5, abs=2)
    # A second visit adds to the first; first_shown_at stays the first.
    first_shown = rows[0].first_shown_at
    earlier(0, 10)
    move(client, token, 1, active_seconds=4)
    rows = timings()
    assert rows[0].seconds_visible == pytest.approx(40, abs=3)
    assert rows[0].active_seconds == 16.5
    assert rows[0].first_shown_at == first_shown
    # A move to the paragraph already shown keeps its visit open.
    open_since = rows[1].visit_started
    move(client, token, 1)
    assert timings()[1].visit_started == open_since


@pytest.mark.parametrize("bad", ["-1", '"5"', "1e999", "true"])
def test_position_body_refuses_bad_active_seconds(app, client, document, bad):
    token = start(client, "doc-1", annotator="reader")
    answer = client.put(
        f"/api/sessions/{token}/position",
        data=f'{{"paragraph_id": 1, "active_seconds": {bad}}}',
        content_type="application/json",
        headers=csrf(token),
    )
    assert answer.status_code == 422, answer.data
    assert "active_seconds" in answer.get_data(as_text=True)
    assert move(client, token, 1, active_seconds=None).status_code == 200


def paragraphs_csv(runner, *args: str) -> list[dict[str, str]]:
    result = runner.invoke(
        args=["export-annotations", "--format", "csv", "--what", "paragraphs", *args]
    )
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.output.lstrip("\ufeff"))))


def test_export_has_one_row_per_paragraph_reached(app, client, runner, document):
    done = start(client, "doc-1", annotator="done")
    client.get(f"/s/{done}")
    earlier(0, 10)
    move(client, done, 1, active_seconds=1)
    earlier(1, 10)
    move(client, done, 2, active_seconds=2)
    assert submit(client, done).status_code == 200
    halfway = start(client, "doc-1", annotator="halfway")
    client.get(f"/s/{halfway}")
    move(client, halfway, 1)
    rows = paragraphs_csv(runner)
    assert list(rows[0]) == [
        "session_id",
        "document_id",
        "paragraph_id",
        "seconds_visible",
        "active_seconds",
        "annotations",
        "words",
    ]
    assert [(r["paragraph_id"], r["words"]) for r in rows] == [
        ("0", "4"),
        ("1", "3"),
        ("2", "2"),
        ("0", "4"),
        ("1", "3"),
    ]
    assert [r["active_seconds"] for r in rows[:3]] == ["1.0", "2.0", "0.0"]
    assert [float(r["seconds_visible"]) for r in rows[:2]] == pytest.approx([10, 10], abs=2)
    assert all(float(r["seconds_visible"]) >= 0 for r in rows)
    assert len(paragraphs_csv(runner, "--submitted-only")) == 3


def test_paragraphs_download(researcher_client, client, document):
    token = start(client, "doc-1", annotator="reader")
    move(client, token, 1)
    answer = researcher_client.get("/research/export/paragraphs.csv")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/csv")
    lines = answer.get_data(as_text=True).lstrip("\ufeff").splitlines()
    assert lines[0].startswith("session_id,document_id,paragraph_id")
    assert len(lines) == 3


def use_speed_limit(app, tmp_path, limit: int) -> None:
    """The default taxonomy with study.min_words_per_minute set, as the running one."""
    from config.settings import DEFAULT_TAXONOMY

    text = Path(DEFAULT_TAXONOMY).read_text(encoding="utf-8")
    text = text.replace("study:\n", f"study:\n  min_words_per_minute: {limit}\n", 1)
    path = tmp_path / "taxonomy.yaml"
    path.write_text(text, encoding="utf-8")
    use_taxonomy(app, path)


def read_in(client, annotator: str, seconds_per_paragraph: float) -> str:
    token = start(client, "doc-1", annotator=annotator)
    # The worker API's state, read as the page's is, opens the first visit too. (After the
    # HTML page a researcher client in the same test is logged out: see the report.)
    assert client.get(f"/api/sessions/{token}").status_code == 200
    for paragraph_id in (1, 2):
        earlier(paragraph_id - 1, seconds_per_paragraph)
        move(client, token, paragraph_id)
    earlier(2, seconds_per_paragraph)
    assert submit(client, token).status_code == 200
    return token


def dashboard(app, researcher) -> str:
    """The dashboard page, for a researcher logged in now."""
    researcher_client = app.test_client()
    with researcher_client.session_transaction() as session:
        session["_user_id"] = str(researcher.id)
        session["_fresh"] = True
    answer = researcher_client.get("/research/")
    assert answer.status_code == 200
    return answer.get_data(as_text=True)


def test_dashboard_flags_sessions_read_too_fast(app, client, researcher, document, tmp_path):
    use_speed_limit(app, tmp_path, 300)
    # 9 words in 3 x 0.5 s = 360 words per minute: rushing; in 3 x 20 s = 9 wpm: not.
    read_in(client, "careful", 20)
    read_in(client, "hasty", 0.5)  # second: earlier() shifts every open visit
    page = dashboard(app, researcher)
    assert "Reading time and fatigue" in page
    assert "1 session read faster than 300 words per minute" in page
    hasty = page[page.index('<ul class="rushing">') :]
    hasty = hasty[: hasty.index("</ul>")]
    assert "hasty" in hasty and "careful" not in hasty
    assert 'data-chart="pace-seconds"' in page and 'data-chart="pace-errors"' in page


def test_dashboard_without_a_speed_limit_flags_nobody(app, client, researcher, document):
    read_in(client, "hasty", 0.5)
    page = dashboard(app, researcher)
    assert "rushing" not in page.split("Reading time and fatigue")[1].split("</section>")[0]
