"""`flask plant-checks`: an attention-check document planted from an imported one."""

from __future__ import annotations

import click
from flask.cli import with_appcontext
from sqlalchemy.exc import IntegrityError

from app.core.cli_kit import fail
from app.core.extensions import db
from app.crowd.checks.plant import KINDS, PlantError, parse_kinds, plant
from app.imports.document_formats import document_from_record
from app.imports.document_store import DocumentImportRefused, import_documents
from app.models import Document, Paragraph
from app.studies import current_study_id
from app.studies.cli import study_option
from app.taxonomy import current_taxonomy


def _kinds(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[str, ...]:
    try:
        return parse_kinds(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("plant-checks")
@click.argument("source_doc_id")
@click.option(
    "--kinds",
    default=",".join(KINDS),
    show_default=True,
    callback=_kinds,
    help="Comma-separated errors to plant, each once: repetition, inconsistency, new-entity.",
)
@click.option(
    "--seed", type=int, required=True, help="Seed of the random choices (same seed, same document)."
)
@click.option(
    "--id", "new_id", default=None, help="Id of the new document [default: SOURCE-check-SEED]."
)
@with_appcontext
@study_option
def plant_checks_command(
    source_doc_id: str, kinds: tuple[str, ...], seed: int, new_id: str | None
) -> None:
    """Make an attention-check document from SOURCE_DOC_ID with known errors planted.

    repetition copies an earlier sentence into a later paragraph (gold: the copy, paired
    with the original); inconsistency replaces one later mention of a recurring name with
    a name the text never uses (gold: that mention, paired with the name's first mention);
    new-entity inserts a sentence about a person never introduced (gold: the name). The
    categories come from the taxonomy's `checks:` mapping. The document is imported like
    any other, all or nothing, and the planted spans are printed.
    """
    taxonomy = current_taxonomy()
    categories = dict(taxonomy.checks)
    missing = [kind for kind in kinds if kind not in categories]
    if missing:
        fail(
            f"{taxonomy.path}: checks: no category for {', '.join(missing)} "
            "(add e.g. `checks: {repetition: KEY, inconsistency: KEY, new-entity: KEY}`)"
        )
    source = db.session.scalar(
        db.select(Document).filter_by(external_id=source_doc_id, study_id=current_study_id())
    )
    if source is None:
        fail(f"{source_doc_id}: no such document (see flask list-documents)")
    if source.gold:
        fail(f"{source_doc_id}: is itself an attention check; plant into an ordinary document")
    texts = db.session.scalars(
        db.select(Paragraph.text).filter_by(document_id=source.id).order_by(Paragraph.position)
    ).all()
    try:
        paragraphs, planted = plant(texts, kinds, seed, categories)
    except PlantError as exc:
        fail(f"{source_doc_id}: cannot plant {exc}")
    record = {
        "paragraphs": list(paragraphs),
        # The source's own title: workers must not see that a document is a check (its
        # gold and meta.planted_from say so to the researchers).
        "title": source.title,
        "entities": list(source.entities or []),
        "language": source.language,
        "meta": {"planted_from": source_doc_id, "seed": seed, "kinds": list(kinds)},
        "gold": [check.gold() for check in planted],
    }
    external_id = new_id if new_id is not None else f"{source_doc_id}-check-{seed}"
    try:
        document = document_from_record(external_id, record)
        report = import_documents([document])
    except ValueError as exc:
        fail(f"--id {external_id!r}: {exc}")
    except DocumentImportRefused as exc:
        fail(f"{external_id}: import refused; nothing imported: {exc}")
    except IntegrityError as exc:
        fail(f"{external_id}: the database refused the import; nothing imported: {exc.orig}")
    click.echo(f"{external_id}: {report.summary()}; planted {len(planted)} check(s):")
    for check in planted:
        click.echo(
            f"  {check.kind:<13} {check.category:<16} paragraph {check.paragraph_id} "
            f"[{check.start}:{check.end}] {check.text!r}"
        )
        if check.paired:
            pid, start, end = check.paired
            click.echo(f"  {'':<13} {'paired with':<16} paragraph {pid} [{start}:{end}]")
