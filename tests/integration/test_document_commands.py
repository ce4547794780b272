"""`flask retire-documents` and `flask delete-documents` (issue 30 points 3 and 7): the
console's documents page's retire and delete as commands, on the same domain functions
(app.studies.documents), each all or nothing with every refusal named, on `--study`."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import event, func, select, update

from app.core.extensions import db
from app.models import AnnotationSession, Document, Paragraph, Suggestion, ValidationItem
from app.studies import require_study
from tests.support.assignment import session_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "studies"


def _documents_file(tmp_path: Path, ids: list[str], name: str = "docs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(
        "".join(
            json.dumps({"id": i, "paragraphs": ["Anna met Bob.", "Bob left."]}) + "\n" for i in ids
        )
    )
    return path


def _state(slug: str) -> dict[str, bool]:
    """{external id: retired} of the study's documents."""
    db.session.expire_all()
    rows = db.session.execute(
        select(Document.external_id, Document.retired_at.is_not(None))
        .where(Document.study_id == require_study(slug).id)
        .order_by(Document.external_id)
    )
    return {external_id: retired for external_id, retired in rows}


def _pilot_with(runner, tmp_path: Path, ids: list[str]) -> None:
    made = runner.invoke(
        args=["create-study", "pilot", "--taxonomy", str(FIXTURES / "pilot-v1.yaml")]
    )
    assert made.exit_code == 0, made.output
    imported = runner.invoke(
        args=["import-documents", str(_documents_file(tmp_path, ids)), "--study", "pilot"]
    )
    assert imported.exit_code == 0, imported.output


def test_both_commands_have_help(runner):
    for name in ("retire-documents", "delete-documents"):
        result = runner.invoke(args=[name, "--help"])
        assert result.exit_code == 0, result.output
        assert "--study SLUG" in result.output and "ID [ID ...]" in result.output
        missing = runner.invoke(args=[name])
        assert missing.exit_code == 2 and "Missing argument" in missing.output


def test_retire_and_undo_in_one_study_only(app, runner, tmp_path):
    _pilot_with(runner, tmp_path, ["p1", "p2", "shared"])
    default = runner.invoke(args=["import-documents", str(_documents_file(tmp_path, ["shared"]))])
    assert default.exit_code == 0, default.output
    result = runner.invoke(args=["retire-documents", "p1", "shared", "--study", "pilot"])
    assert result.exit_code == 0, result.output
    assert "Retired 2 document(s) of study 'pilot'." in result.output
    assert _state("pilot") == {"p1": True, "p2": False, "shared": True}
    assert _state("default") == {"shared": False}  # the default study's own is untouched
    # /study/pilot/start passes the retired ones over; a worker gets p2
    worker = app.test_client()
    session = session_of(worker.get("/study/pilot/start", query_string={"annotator": "w1"}))
    assert db.session.get(Document, session.document_id).external_id == "p2"
    listed = runner.invoke(args=["list-documents", "--study", "pilot"]).output.splitlines()
    assert [line.split()[-1] for line in listed[1:]] == [
        "(retired)",
        "http://127.0.0.1:5000/study/pilot/annotate/p2",
        "(retired)",
    ]  # a retired document's link would open no new session: none is printed
    again = runner.invoke(args=["retire-documents", "p1", "--study", "pilot"])
    assert again.exit_code == 0 and "p1: retired already" in again.output
    undone = runner.invoke(args=["retire-documents", "shared", "p2", "--undo", "--study", "pilot"])
    assert undone.exit_code == 0, undone.output
    assert "Un-retired 1 document(s)" in undone.output and "p2: active already" in undone.output
    assert _state("pilot") == {"p1": True, "p2": False, "shared": False}
    by_default = runner.invoke(args=["retire-documents", "shared"])  # no --study: the default
    assert by_default.exit_code == 0, by_default.output
    assert _state("default") == {"shared": True}
    assert _state("pilot")["shared"] is False


def test_retire_refuses_unknown_ids_all_or_nothing(app, runner, tmp_path):
    _pilot_with(runner, tmp_path, ["p1", "p2"])
    result = runner.invoke(args=["retire-documents", "p1", "nope", "p9", "--study", "pilot"])
    assert result.exit_code == 1
    assert "2 document(s) refused: none retired." in result.output
    assert "nope: no document with this id in study 'pilot'" in result.output
    assert "p9: no document with this id in study 'pilot'" in result.output
    assert "list-documents --study pilot" in result.output
    assert "Traceback" not in result.output
    assert _state("pilot") == {"p1": False, "p2": False}  # p1 was not retired either
    unknown_study = runner.invoke(args=["retire-documents", "p1", "--study", "nowhere"])
    assert unknown_study.exit_code == 1 and "nowhere" in unknown_study.output


def test_delete_only_what_nothing_points_to_all_or_nothing(app, runner, tmp_path):
    _pilot_with(runner, tmp_path, ["p1", "p2", "p3"])
    worker = app.test_client()
    session = session_of(worker.get("/study/pilot/start", query_string={"annotator": "w1"}))
    worked = db.session.get(Document, session.document_id).external_id
    free = sorted({"p1", "p2", "p3"} - {worked})
    refused = runner.invoke(args=["delete-documents", *free, worked, "--study", "pilot"])
    assert refused.exit_code == 1
    assert "1 document(s) refused: none deleted." in refused.output
    assert f"{worked}: it has 1 session (retire it instead: it keeps its sessions)." in (
        refused.output
    )
    assert _state("pilot") == {"p1": False, "p2": False, "p3": False}  # none deleted
    dry = runner.invoke(args=["delete-documents", *free, "--dry-run", "--study", "pilot"])
    assert dry.exit_code == 0, dry.output
    assert "Would delete 2 document(s)" in dry.output and "nothing deleted" in dry.output
    assert len(_state("pilot")) == 3
    unknown = runner.invoke(args=["delete-documents", free[0], "gone", "--study", "pilot"])
    assert unknown.exit_code == 1 and "gone: no document with this id" in unknown.output
    assert len(_state("pilot")) == 3
    deleted = runner.invoke(args=["delete-documents", *free, "--study", "pilot"])
    assert deleted.exit_code == 0, deleted.output
    assert f"Deleted 2 document(s) of study 'pilot':\n  {free[0]}\n  {free[1]}\n" in (
        deleted.output
    )
    assert _state("pilot") == {worked: False}
    db.session.expire_all()
    paragraphs = db.session.scalar(select(func.count()).select_from(Paragraph))
    assert paragraphs == 2  # the deleted documents' paragraphs went with them


def test_a_retired_document_takes_suggestions_and_rounds_and_then_is_kept(app, runner, tmp_path):
    # Retired means no new sessions, not out of the study: a validation round may judge
    # its annotations and suggestions may be imported for it (shown if it is un-retired);
    # either then keeps it from being deleted.
    imported = runner.invoke(args=["import-documents", str(_documents_file(tmp_path, ["d1"]))])
    assert imported.exit_code == 0, imported.output
    assert runner.invoke(args=["retire-documents", "d1"]).exit_code == 0
    suggestions = tmp_path / "suggestions.jsonl"
    suggestions.write_text(
        '{"id": "s1", "document_id": "d1", "span": {"text": "Bob left."}, '
        '"category": "new-person"}\n'
    )
    result = runner.invoke(args=["import-suggestions", str(suggestions), "--source", "m"])
    assert result.exit_code == 0, result.output
    items = tmp_path / "items.jsonl"
    items.write_text(
        '{"id": "i1", "source": "gold", "document_id": "d1", "span": {"text": "Bob"}}\n'
    )
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(items)])
    assert result.exit_code == 0, result.output
    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(Suggestion)) == 1
    assert db.session.scalar(select(func.count()).select_from(ValidationItem)) == 1
    refused = runner.invoke(args=["delete-documents", "d1"])
    assert refused.exit_code == 1
    assert "d1: it has 1 validation item (it is judged in a validation round)." in refused.output
    assert _state("default") == {"d1": True}


def test_a_session_that_comes_to_point_to_a_document_mid_delete_keeps_it(
    make_postgres_app, tmp_path
):
    # The checks passed; then, before the delete is committed, another connection makes a
    # session point to the document. The foreign key refuses the delete (PostgreSQL), so
    # nothing is deleted and the refusal names the reason found then.
    app = make_postgres_app()
    with app.app_context():
        runner = app.test_cli_runner()
        path = _documents_file(tmp_path, ["d1", "d2"])
        assert runner.invoke(args=["import-documents", str(path)]).exit_code == 0
        session = session_of(app.test_client().get("/annotate/d2?annotator=w1"))
        d1 = db.session.scalar(select(Document.id).where(Document.external_id == "d1"))

        fired: list[bool] = []

        def meanwhile(committing) -> None:
            # The listener is on every session of the process: a commit of another (an
            # earlier test's background thread) is not the delete's.
            if fired or not any(isinstance(row, Document) for row in committing.deleted):
                return
            fired.append(True)
            with db.engine.begin() as other:
                other.execute(
                    update(AnnotationSession)
                    .where(AnnotationSession.id == session.id)
                    .values(document_id=d1)
                )

        event.listen(db.session, "before_commit", meanwhile)
        try:
            result = runner.invoke(args=["delete-documents", "d1"])
        finally:
            event.remove(db.session, "before_commit", meanwhile)
        assert fired == [True]
        assert result.exit_code == 1, result.output
        assert "d1: it has 1 session" in result.output
        assert _state("default") == {"d1": False, "d2": False}
