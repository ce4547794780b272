"""A validation study judging the default study (issue 30): the default study's documents
and one submitted annotator's annotations, exported as our export does, and validation
studies made and given rounds through the real commands."""

from __future__ import annotations

from pathlib import Path

from app.core.extensions import db
from tests.support.taxonomies import taxonomy_variant, use_taxonomy
from tests.support.validation import add_annotation, make_documents, make_session

ANNOTATION_CODE = "ANNDONE1"  # the default (annotation) study's `completed` code
PROLIFIC = "https://app.prolific.com/submissions/complete?cc="


def judged_study(app, runner, folder: Path) -> Path:
    """The default study with documents, its own completion code and alice's submitted
    annotations; the path of their export (the items a validation round judges)."""
    completion = f"  completion: {{completed: {ANNOTATION_CODE}}}\n"
    use_taxonomy(app, taxonomy_variant(folder, study_lines=completion, name="annotation.yaml"))
    make_documents()
    alice = make_session("doc-a", "alice", status="submitted")
    add_annotation(alice, 0, "Zoë", "new-person", occurrence=1)
    add_annotation(alice, 1, "he slept", "repetition", paired=(0, "Zoë smiled"))
    export = folder / "export.jsonl"
    result = runner.invoke(args=["export-annotations", "--output", str(export)])
    assert result.exit_code == 0, result.output
    return export


def validation_study(
    runner, folder: Path, slug: str, codes: dict[str, str], append: str = ""
) -> None:
    """Create the validation study `slug` judging the default study, with these
    completion codes per outcome (and `append`ed sections: consent, ...)."""
    body = ", ".join(f"{outcome}: {code}" for outcome, code in codes.items())
    taxonomy = taxonomy_variant(
        folder, study_lines=f"  completion: {{{body}}}\n", append=append, name=f"{slug}.yaml"
    )
    result = runner.invoke(
        args=[
            "create-study",
            slug,
            "--taxonomy",
            str(taxonomy),
            "--kind",
            "validation",
            "--judges",
            "default",
        ]
    )
    assert result.exit_code == 0, result.output


def create_round(runner, slug: str, name: str, items: Path, *extra: str) -> None:
    """`flask validation create-round NAME --items ITEMS --study SLUG`, which must succeed."""
    args = ["validation", "create-round", name, "--items", str(items), "--study", slug]
    result = runner.invoke(args=[*args, "--seed", "1", *extra])
    assert result.exit_code == 0, result.output
    db.session.remove()
