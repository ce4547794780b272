"""`validation create-round` from our export takes submitted sessions only (issue 14 point 11):
the recipe of docs/validation-rounds.md ("A round from start to finish") exports every
session, and an active worker's annotations, which they may still change or remove, must
not be judged unless the researcher asks for them."""

from __future__ import annotations

from app.core.extensions import db
from app.models import ValidationItem, ValidationRound
from tests.support.validation import add_annotation, make_documents, make_session


def _origins(name: str) -> list[str]:
    round_id = db.session.scalar(db.select(ValidationRound.id).filter_by(name=name))
    items = db.session.scalars(db.select(ValidationItem).filter_by(round_id=round_id)).all()
    return sorted(item.origin_annotator for item in items)


def _export(runner, tmp_path):
    make_documents()
    alice = make_session("doc-a", "alice", status="submitted")
    add_annotation(alice, 0, "Zoë", "new-person", occurrence=1)
    add_annotation(alice, 1, "he slept", "repetition", paired=(0, "Zoë smiled"))
    bob = make_session("doc-a", "bob", status="active", furthest=1)
    add_annotation(bob, 0, "Łukasz", "new-person")
    carol = make_session("doc-b", "carol", status="abandoned")
    add_annotation(carol, 0, "letter", "repetition", occurrence=1, paired=(0, "letter"))
    path = tmp_path / "export.jsonl"
    result = runner.invoke(
        args=["export-annotations", "--output", str(path)]
    )  # docs/validation-rounds.md
    assert result.exit_code == 0, result.output
    return path


def test_create_round_leaves_out_unsubmitted_sessions_and_says_how_many(app, runner, tmp_path):
    path = _export(runner, tmp_path)
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(path)])
    assert result.exit_code == 0, result.output
    assert _origins("r1") == ["direct:alice", "direct:alice"]
    assert "Created round 'r1': 2 items" in result.output
    assert "Left out: 2 annotation(s) of sessions not submitted" in result.output


def test_include_unsubmitted_keeps_them(app, runner, tmp_path):
    path = _export(runner, tmp_path)
    args = ["validation", "create-round", "r2", "--items", str(path), "--include-unsubmitted"]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    assert _origins("r2") == ["direct:alice", "direct:alice", "direct:bob", "direct:carol"]
    assert "Left out" not in result.output


def test_a_round_of_only_unsubmitted_work_is_refused_with_the_reason(app, runner, tmp_path):
    make_documents()
    bob = make_session("doc-a", "bob", status="active")
    add_annotation(bob, 0, "Łukasz", "new-person")
    path = tmp_path / "export.jsonl"
    assert runner.invoke(args=["export-annotations", "--output", str(path)]).exit_code == 0
    result = runner.invoke(args=["validation", "create-round", "r3", "--items", str(path)])
    assert result.exit_code == 1
    assert "1 annotation(s) of unsubmitted sessions left out" in result.output
    assert db.session.scalar(db.select(db.func.count(ValidationRound.id))) == 0


def test_help_names_the_option(app, runner):
    result = runner.invoke(args=["validation", "create-round", "--help"])
    assert "--include-unsubmitted" in result.output
