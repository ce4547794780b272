"""What `flask check-taxonomy` says about a valid file: a summary, and what production
still needs (warnings, at their line).
"""

from __future__ import annotations

from app.core.yaml_checker import (
    Problem,
    read_yaml,
)
from app.taxonomy.model import (
    Taxonomy,
    TrainingSettings,
)


def summarise(taxonomy: Taxonomy) -> str:
    """A human-readable summary of a taxonomy, for `flask check-taxonomy`."""
    paired = sum(c.is_paired for c in taxonomy.categories)
    count = len(taxonomy.categories)
    study, validation = taxonomy.study, taxonomy.validation
    lines = [
        taxonomy.title,
        f"file: {taxonomy.path}",
        f"version: {taxonomy.version}",
        f"{count} categories ({count - paired} singleton, {paired} paired):",
        *(f"  {c.key:<24} {c.type:<9} [{c.shortcut or ' '}] {c.name}" for c in taxonomy.categories),
        f"entities: {taxonomy.entities}",
        f"comment: {taxonomy.comment.label!r} "
        f"({'required' if taxonomy.comment.required else 'optional'}, "
        f"max {taxonomy.comment.max_length} characters)",
        f"study: {study.annotators_per_document} annotator(s) per document, "
        f"abandoned after {study.abandon_after_minutes} min, "
        f"places released after {study.claim_minutes} min without activity "
        f"(5 min before the first work), at most {study.max_open_per_network} open "
        "per client network, "
        f"attention checks {study.attention_check_share:.0%}, "
        f"completion URL {study.completion_url or '(none)'}",
        f"attention_checks: {study.attention_checks} ("
        + (
            "missed checks end with failed_checks)"
            if study.attention_checks == "fail"
            else "missed checks are only flagged on the dashboard)"
        ),
        "prolific study id: "
        + (
            f"{study.prolific_study_id} (Prolific arrivals with another STUDY_ID are refused)"
            if study.prolific_study_id
            else "(none)"
        ),
        "completion per outcome ({code} = the session's own code):",
        *(
            f"  {target.outcome:<16} {target.url or '(none: the app shows its own code)'}"
            for target in study.completion_targets
        ),
        "planted checks: "
        + (", ".join(f"{kind} -> {key}" for kind, key in taxonomy.checks) or "(none)"),
        training_summary(taxonomy.training),
        f"validation: partial agreement counts as "
        f"{'valid' if validation.partial_counts_as_valid else 'invalid'}; reasons "
        "(items with a question):",
        *(f"  {reason}" for reason in validation.reasons),
        "category reasons (items with a category and no question):",
        *(f"  {reason}" for reason in validation.category_reasons),
        *_study_steps_summary(taxonomy),
        *_severity_summary(taxonomy),
    ]
    return "\n".join(lines)


def _severity_summary(taxonomy: Taxonomy) -> list[str]:
    """check-taxonomy's lines on severities (none when the taxonomy has none)."""
    if not taxonomy.severities:
        return []
    lines = [f"severities ({len(taxonomy.severities)}, MQM weights):"]
    lines += [
        f"  {s.key:<24} [{s.shortcut or ' '}] weight {s.weight:g}  {s.name}"
        for s in taxonomy.severities
    ]
    lines += [
        f"  {c.key:<24} offers {', '.join(c.severities)}"
        for c in taxonomy.categories
        if c.severities
    ]
    return lines


def training_summary(training: TrainingSettings) -> str:
    """One line saying what training the taxonomy asks for."""
    if not training.enabled:
        return "training: none"
    return (
        f"training: {', '.join(training.documents)}; pass with recall >= "
        f"{training.min_recall:.0%} and precision >= {training.min_precision:.0%} "
        f"in at most {training.attempts} attempt(s) per document"
    )


def _study_steps_summary(taxonomy: Taxonomy) -> list[str]:
    """check-taxonomy's lines for the consent step and the surveys."""
    consent = taxonomy.consent
    lines = [f"consent: {f'{len(consent)} characters of Markdown' if consent else '(none)'}"]
    for which, when in (("before", "before the task"), ("after", "after Submit")):
        questions = taxonomy.survey.questions(which)
        lines.append(f"survey {when}: {len(questions) or 'no'} question(s)")
        lines.extend(
            f"  {q.key:<24} {q.type:<7} {'required' if q.required else 'optional'}  {q.text}"
            for q in questions
        )
    return lines


def taxonomy_warnings(path: str, taxonomy: Taxonomy) -> list[Problem]:
    """What a valid file still lacks for production, at its line: a study that sends
    workers back to Prolific without `study.prolific_study_id` (production refuses its
    Prolific arrivals, app.crowd.submissions)."""
    if not taxonomy.study.sends_to_prolific or taxonomy.study.prolific_study_id:
        return []
    _, _, check = read_yaml(path)
    check.problem(
        ("study", "prolific_study_id"),
        "missing: this study sends workers back to Prolific, so production needs the "
        "Prolific study's id here (Prolific arrivals are refused without it)",
    )
    return check.problems
