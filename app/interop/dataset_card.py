"""The Hugging Face dataset of a study: its card (README.md) and its data files.

Standards: Hugging Face Hub dataset cards (https://huggingface.co/docs/hub/datasets-cards)
and their metadata (the Hub's ``datasetcard.md`` spec in huggingface/hub-docs); subsets
("configurations") and their data files declared in the card's YAML
(https://huggingface.co/docs/hub/datasets-manual-configuration), which is what
``datasets.load_dataset(DIR)`` reads; license identifiers
(https://huggingface.co/docs/hub/repositories-licenses); size categories as the
``datasets`` library lists them (``size_categories.json``: ``n<1K`` ... ``n>1T``).

``flask export-dataset DIR`` writes (`iter_dataset_files`, a file at a time, the data a
line at a time; `dataset_files` as a dict): ``README.md`` and one JSON Lines
file per configuration under ``data/``: ``annotations`` (the default: one annotation
export record a line, app.exports.record), ``documents``, ``sessions`` and ``judgments``.
A configuration without rows is left out (the Hub cannot load an empty file) and the
card says so. The card's YAML gives ``configs`` (each with ``data_files``, ``default:
true`` on annotations), ``license``, ``language`` (ISO 639 codes of the documents' BCP 47
tags, the full tags under ``language_details``), ``task_categories``, ``size_categories``
(from the number of annotations, the default configuration's rows), ``pretty_name`` and
``tags``; its prose the taxonomy with its definitions, the protocol, the counts, the
figures with their definitions and intervals, what was excluded and why, the offset
convention (Unicode code points, end exclusive) and how ids were pseudonymised.

Ids of people (IDENTIFYING_FIELDS) are replaced by keyed pseudonyms
(app.interop.pseudonyms) unless kept, in the data and in the card's list of excluded
annotators alike. Text from the taxonomy, documents and people is escaped for Markdown
and HTML in the prose, and written by a YAML dumper in the metadata.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import langcodes
import yaml

from app.interop.pseudonyms import Pseudonyms
from app.rules.jsonl import json_line

CONFIGS = ("annotations", "documents", "sessions", "judgments")
DEFAULT_CONFIG = "annotations"
# Keys holding ids of people or of their submissions, per configuration.
IDENTIFYING_FIELDS: dict[str, tuple[str, ...]] = {
    "annotations": ("annotator_id",),
    "documents": (),
    "sessions": ("annotator_id", "platform_session_id", "assignment_id", "completion_code"),
    "judgments": ("validator", "validator_id", "annotator_id"),
}
CONFIG_ROWS = {
    "annotations": "one annotation (one label on one span; the rows of one error with "
    "several labels share `unit_id`)",
    "documents": "one document with its paragraphs",
    "sessions": "one reading of one document by one annotator, with its outcome",
    "judgments": "one validator's verdict on one annotation",
}
TASK_CATEGORIES = ("token-classification",)
TAGS = ("human-evaluation", "error-annotation", "span-annotation")
# The Hub's license identifiers (docs/hub/repositories-licenses).
LICENSES = frozenset(
    """apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m
    bigscience-bloom-rail-1.0 bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd
    bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5
    cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0
    cc-by-nd-4.0 cc-by-nc-nd-3.0 cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0
    cc-by-nc-sa-4.0 cdla-sharing-1.0 cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0
    epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1
    lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odc-by odbl openrail++ osl-3.0 postgresql ofl-1.1
    ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license llama2 gemma unknown other""".split()
)
# (upper bound, bucket): the Hub's size categories by number of rows.
SIZE_CATEGORIES = (
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
    (10**10, "1B<n<10B"),
    (10**11, "10B<n<100B"),
    (10**12, "100B<n<1T"),
)
EXCLUSION_REASONS = {
    "failed_checks": "missed the study's attention checks (the study's outcome failed_checks)",
    "failed_training": "did not pass the training",
    "flagged": "flagged by their attention checks",
}
BOOOOKSCORE_DEFINITION = (
    "100 × (1 − error units / sentences) per submitted reading, the mean over a "
    "document's readings, then over documents (Chang et al., ICLR 2024, eq. 1; the "
    "release's Scorer.get_score); it may fall below 0"
)
ERRORS_PER_SENTENCE_DEFINITION = (
    "occurrences of the category / sentences × 100 (BooookScore, Chang et al. 2024, Table 1)"
)


@dataclass(frozen=True)
class CardFigure:
    """One figure of the study with its published definition and 95% interval."""

    name: str
    value: float | None
    ci95: tuple[float, float] | None
    definition: str


@dataclass(frozen=True)
class StudyFacts:
    """What the card says about the study, as plain data.

    `taxonomy`: ``{"categories": [{"key", "name", "type", "description"}], "severities":
    [{"key", "name", "weight", "description"?}]}`` (``dataclasses.asdict`` of
    app.taxonomy.Taxonomy has it). `languages`: the documents' BCP 47 tags. `protocol`:
    sentences (protocol_lines makes them from the study's settings). `excluded`:
    study-report's ``excluded`` object. `figures`: figures_from_report's, or any.
    """

    title: str
    license: str
    languages: Sequence[str | None] = ()
    taxonomy: Mapping[str, Any] = field(default_factory=dict)
    protocol: Sequence[str] = ()
    figures: Sequence[CardFigure] = ()
    excluded: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Counts:
    """How many rows each configuration has, and how many documents, people and errors."""

    rows: Mapping[str, int]
    documents: int
    annotators: int
    units: int


# --- metadata ----------------------------------------------------------------------------


def data_path(config: str) -> str:
    """Where a configuration's rows go in the folder."""
    return f"data/{config}.jsonl"


def size_category(rows: int) -> str:
    """The Hub's size category for a number of rows (n<1K below 1,000 ...)."""
    return next((bucket for bound, bucket in SIZE_CATEGORIES if rows < bound), "n>1T")


def check_license(license_id: str) -> str:
    """`license_id` when it is one of the Hub's identifiers; ValueError otherwise."""
    if license_id not in LICENSES:
        raise ValueError(
            f"{license_id!r} is not a Hugging Face license identifier (e.g. cc-by-4.0, "
            "cc-by-nc-4.0, cc0-1.0, odc-by, mit, other; "
            "https://huggingface.co/docs/hub/repositories-licenses)"
        )
    return license_id


def hub_languages(tags: Iterable[str | None]) -> tuple[list[str], list[str]]:
    """(ISO 639 codes for ``language``, full BCP 47 tags for ``language_details``) of the
    documents' tags, each sorted without repeats; unknown or empty tags are skipped."""
    codes, details = set(), set()
    for tag in tags:
        if not tag or not langcodes.tag_is_valid(tag):
            continue
        code = langcodes.Language.get(tag).language
        if code:
            codes.add(code)
            details.add(tag)
    return sorted(codes), sorted(details)


def card_metadata(facts: StudyFacts, counts: Counts) -> dict[str, Any]:
    """The card's YAML metadata: what the Hub and ``datasets.load_dataset`` read."""
    languages, details = hub_languages(facts.languages)
    configs = []
    for config in (c for c in CONFIGS if counts.rows.get(c)):
        entry: dict[str, Any] = {"config_name": config, "data_files": data_path(config)}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        configs.append(entry)
    metadata: dict[str, Any] = {
        "pretty_name": " ".join(facts.title.split()),  # one line: a display name
        "license": check_license(facts.license),
        "language": languages,
        "language_details": details if details != languages else None,
        "task_categories": list(TASK_CATEGORIES),
        "tags": list(TAGS),
        "annotations_creators": ["crowdsourced"],
        "size_categories": [size_category(counts.rows.get(DEFAULT_CONFIG, 0))],
        "configs": configs,
    }
    return {key: value for key, value in metadata.items() if value}


# --- prose -------------------------------------------------------------------------------

# Characters that make Markdown inside a line (emphasis, links, code, tables, strikethrough).
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")


def md(text: Any) -> str:
    """Text from a taxonomy, a document or a person as literal Markdown inside a line (never
    at its start): HTML characters as entities, inline Markdown characters backslash-escaped,
    line breaks as spaces."""
    value = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(_MARKDOWN.sub(r"\\\1", value).split())


def code(text: Any) -> str:
    """An id as a Markdown code span in a table cell: no backquote or line break can end
    it, and a ``|`` cannot end the cell (GFM reads ``\\|`` in a cell as ``|``)."""
    value = " ".join(str(text).replace("`", "'").split())
    return "`" + value.replace("|", "\\|") + "`"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _interval(ci95: Sequence[float] | None) -> str:
    return "—" if not ci95 else f"[{_number(ci95[0])}, {_number(ci95[1])}]"


def _taxonomy(taxonomy: Mapping[str, Any]) -> list[str]:
    lines = ["| Key | Name | Type | Definition |", "|---|---|---|---|"]
    for category in taxonomy.get("categories") or ():
        lines.append(
            f"| {code(category['key'])} | {md(category.get('name', ''))} | "
            f"{md(category.get('type', ''))} | {md(category.get('description') or '')} |"
        )
    severities = taxonomy.get("severities") or ()
    if severities:
        lines += ["", "Severities (MQM-style weights):", ""]
        lines += ["| Key | Name | Weight | Definition |", "|---|---|---|---|"]
        lines += [
            f"| {code(s['key'])} | {md(s.get('name', ''))} | {_number(s.get('weight'))} | "
            f"{md(s.get('description') or '')} |"
            for s in severities
        ]
    return lines


def _excluded(excluded: Mapping[str, Any], pseudonyms: Pseudonyms) -> list[str]:
    documents = list(excluded.get("documents") or ())
    annotators = list(excluded.get("annotators") or ())
    if not documents and not annotators:
        return ["Nothing was excluded from the figures."]
    lines = []
    if documents:
        ids = ", ".join(code(d) for d in documents)
        lines.append(
            f"- {len(documents)} attention-check document(s), counted in no figure: {ids}."
        )
    for worker in annotators:
        reason = EXCLUSION_REASONS.get(worker.get("reason"), md(worker.get("reason")))
        lines.append(
            f"- Annotator {code(pseudonyms(worker.get('annotator_id')))}: {reason}; "
            "their sessions count in no figure (their rows are in the data, `flagged: true`)."
        )
    return lines


def dataset_card(facts: StudyFacts, counts: Counts, pseudonyms: Pseudonyms) -> str:
    """The README.md: YAML metadata between ``---`` lines, then the prose."""
    metadata = yaml.safe_dump(
        card_metadata(facts, counts), sort_keys=False, allow_unicode=True, width=100
    )
    configs = [
        f"| `{config}` | `{data_path(config)}` | {counts.rows[config]} | {CONFIG_ROWS[config]} |"
        for config in CONFIGS
        if counts.rows.get(config)
    ]
    missing = [config for config in CONFIGS if not counts.rows.get(config)]
    figures = [
        f"| {md(f.name)} | {_number(f.value)} | {_interval(f.ci95)} | {md(f.definition)} |"
        for f in facts.figures
    ]
    lines = [
        "---",
        metadata.rstrip("\n"),
        "---",
        "",
        f"# {md(facts.title)}",
        "",
        f"Error annotations of {counts.documents} document(s) by {counts.annotators} "
        f"annotator(s): {counts.rows.get('annotations', 0)} annotation rows, "
        f"{counts.units} error unit(s).",
        "",
        "```python",
        "from datasets import load_dataset",
        'annotations = load_dataset("path/to/this/folder")  # the default: annotations',
        'sessions = load_dataset("path/to/this/folder", "sessions")',
        "```",
        "",
        "## Configurations",
        "",
        "| Configuration | File | Rows | A row is |",
        "|---|---|---|---|",
        *configs,
        *(["", f"No {' or '.join(missing)}: the study has none, so no file."] if missing else []),
        "",
        "## Offsets",
        "",
        "`span` and `paired_span` are `{paragraph_id, start, end, text}`: `paragraph_id` is "
        "the paragraph's 0-based position in its document, `start` and `end` count Unicode "
        "code points (not bytes, not UTF-16 units) of that paragraph, end exclusive, and "
        "`text == paragraphs[paragraph_id][start:end]` in Python. Text is stored NFC with LF "
        "line ends. A paired error's `paired_span` is the earlier text it relates to.",
        "",
        "## Error taxonomy",
        "",
        *_taxonomy(facts.taxonomy),
        "",
        "## Protocol",
        "",
        *([f"- {md(line)}" for line in facts.protocol] or ["Not described."]),
        "",
        "## Figures",
        "",
        *(
            ["| Figure | Value | 95% interval | Definition |", "|---|---|---|---|", *figures]
            if figures
            else ["No figures were given."]
        ),
        "",
        "## Exclusions",
        "",
        *_excluded(facts.excluded, pseudonyms),
        "",
        "## Identifiers",
        "",
        _identifiers_note(pseudonyms),
        "",
        "## License",
        "",
        f"{code(facts.license)}.",
        "",
    ]
    return "\n".join(lines)


def _identifiers_note(pseudonyms: Pseudonyms) -> str:
    if pseudonyms.keep_ids:
        return (
            "Worker, session and validator ids are the platforms' own (exported with `--keep-ids`)."
        )
    return (
        "Worker ids, platform session and assignment ids, completion codes and validator ids "
        "are pseudonyms: `anon-` and 16 hex digits of HMAC-SHA256 keyed with a secret of the "
        "study's server. The same id has the same pseudonym everywhere in this dataset, so "
        "configurations join; without the key a pseudonym cannot be traced back or checked "
        "against a guessed id."
    )


# --- data --------------------------------------------------------------------------------


def pseudonymised(
    config: str, rows: Iterable[Mapping[str, Any]], pseudonyms: Pseudonyms
) -> Iterator[dict[str, Any]]:
    """The rows of a configuration with their IDENTIFYING_FIELDS pseudonymised, one by one."""
    keys = IDENTIFYING_FIELDS[config]
    for row in rows:
        yield {key: pseudonyms(value) if key in keys else value for key, value in row.items()}


def jsonl_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """Rows as JSON Lines, a line at a time (each ended; app.rules.jsonl's json_line)."""
    for row in rows:
        yield json_line(row) + "\n"


def jsonl_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as JSON Lines (UTF-8 text, one object a line, each line ended)."""
    return "".join(jsonl_lines(rows))


class Tally:
    """The counts the card gives, kept as the rows go by (`see(config, row)`), in memory
    that does not grow with the annotations: error units are told apart within a session
    only, so the annotations must come session by session, as the export orders them
    (app.exports.record: by document, then session). People and documents are sets of
    ids."""

    def __init__(self) -> None:
        self.rows = dict.fromkeys(CONFIGS, 0)
        self.people: set[Any] = set()
        self.documents: set[Any] = set()
        self.annotated: set[Any] = set()  # documents of annotations: without a documents file
        self.units = 0
        self._session: Any = object()
        self._units: set[tuple] = set()

    def see(self, config: str, row: Mapping[str, Any]) -> None:
        """Count one row of a configuration."""
        self.rows[config] += 1
        if config == "annotations":
            self.people.add(row.get("annotator_id"))
            self.annotated.add(row.get("document_id"))
            if row.get("session_id") != self._session:
                self.units += len(self._units)
                self._session, self._units = row.get("session_id"), set()
            self._units.add((row.get("annotator_id"), row.get("unit_id")))
        elif config == "sessions":
            self.people.add(row.get("annotator_id"))
        elif config == "documents":
            self.documents.add(row.get("document_id"))

    def counts(self) -> Counts:
        """The counts of the rows seen."""
        documents = self.documents or self.annotated
        return Counts(
            rows=dict(self.rows),
            documents=len(documents - {None}),
            annotators=len(self.people - {None}),
            units=self.units + len(self._units),
        )


def count(rows: Mapping[str, Iterable[Mapping[str, Any]]]) -> Counts:
    """The counts the card gives, from the rows of each configuration (Tally's)."""
    tally = Tally()
    for config in CONFIGS:
        for row in rows.get(config, ()):
            tally.see(config, row)
    return tally.counts()


def _counted(config: str, first: Mapping[str, Any], rest: Iterator, tally: Tally) -> Iterator:
    tally.see(config, first)
    yield first
    for row in rest:
        tally.see(config, row)
        yield row


def iter_dataset_files(
    rows: Mapping[str, Iterable[Mapping[str, Any]]],
    facts: StudyFacts | Callable[[], StudyFacts],
    pseudonyms: Pseudonyms,
) -> Iterator[tuple[str, Iterator[str]]]:
    """The dataset folder one file at a time, (relative path, its text in pieces):
    data/<config>.jsonl for each configuration with rows, a line at a time as its rows
    are read, then README.md, whose counts are those of the rows written (`facts` may be
    a function called then). Each file's pieces must be read before the next file is
    asked for."""
    unknown = set(rows) - set(CONFIGS)
    if unknown:
        raise ValueError(f"not configurations of the dataset: {', '.join(sorted(unknown))}")
    tally = Tally()
    for config in CONFIGS:
        clean = pseudonymised(config, rows.get(config, ()), pseudonyms)
        first = next(clean, None)
        if first is not None:  # a configuration without rows has no file
            yield data_path(config), jsonl_lines(_counted(config, first, clean, tally))
    card = dataset_card(facts() if callable(facts) else facts, tally.counts(), pseudonyms)
    yield "README.md", iter((card,))


def dataset_files(
    rows: Mapping[str, Iterable[Mapping[str, Any]]],
    facts: StudyFacts | Callable[[], StudyFacts],
    pseudonyms: Pseudonyms,
) -> dict[str, str]:
    """The dataset folder, relative path -> text: README.md and data/<config>.jsonl for
    each configuration with rows (`rows` maps configuration -> its records;
    iter_dataset_files writes them)."""
    return {path: "".join(pieces) for path, pieces in iter_dataset_files(rows, facts, pseudonyms)}


# --- from the study ----------------------------------------------------------------------


def figures_from_report(report: Mapping[str, Any]) -> list[CardFigure]:
    """The figures of a study-report JSON (docs/contracts.md#study-report-json) with their
    definitions:
    BooookScore, errors per 100 sentences per category, and each agreement figure (its
    own ``unit`` says what it measures and how its interval is computed)."""
    figures = []
    if report.get("booookscore") is not None:
        figures.append(
            CardFigure("BooookScore (study)", report["booookscore"], None, BOOOOKSCORE_DEFINITION)
        )
    for key, value in (report.get("errors_per_sentence") or {}).items():
        figures.append(
            CardFigure(
                f"Errors per 100 sentences: {key}", value, None, ERRORS_PER_SENTENCE_DEFINITION
            )
        )
    for name, figure in (report.get("agreement") or {}).items():
        if isinstance(figure, Mapping):
            ci95 = figure.get("ci95")
            figures.append(
                CardFigure(
                    name,
                    figure.get("value"),
                    tuple(ci95) if ci95 else None,  # type: ignore[arg-type]
                    str(figure.get("unit") or ""),
                )
            )
    return figures


def protocol_lines(settings: Mapping[str, Any]) -> list[str]:
    """Sentences describing the protocol, from plain study settings: ``platforms``
    (list), ``annotators_per_document``, ``consent`` (bool), ``surveys`` (list of
    "before"/"after"), ``training`` (bool), ``attention_checks`` ("flag" | "fail"),
    ``severities`` (bool), ``suggestions`` (list of sources), ``validation`` (bool)."""
    lines = []
    platforms = settings.get("platforms") or ()
    if platforms:
        lines.append(f"Annotators were recruited on {', '.join(map(str, platforms))}.")
    if settings.get("annotators_per_document"):
        lines.append(
            f"Each document was assigned to {settings['annotators_per_document']} annotators, "
            "who read it one paragraph at a time and marked every error as a span with a "
            "category from the taxonomy (a paired category also marks the earlier span it "
            "relates to)."
        )
    steps = ["consent"] if settings.get("consent") else []
    steps += ["a survey before the task"] if "before" in (settings.get("surveys") or ()) else []
    steps += ["training with feedback"] if settings.get("training") else []
    steps += ["the task"]
    steps += ["a survey after it"] if "after" in (settings.get("surveys") or ()) else []
    lines.append("Steps: " + ", then ".join(steps) + ".")
    mode = settings.get("attention_checks")
    if mode:
        outcome = (
            "failing them ended the study (outcome failed_checks)"
            if mode == "fail"
            else "missing them flagged the annotator"
        )
        lines.append(f"Attention-check documents with known errors were mixed in; {outcome}.")
    if settings.get("severities"):
        lines.append("Each error also has a severity (MQM-style weights, see the taxonomy).")
    if settings.get("suggestions"):
        sources = ", ".join(map(str, settings["suggestions"]))
        lines.append(f"Annotators were shown model suggestions ({sources}) to accept, edit "
                     "or reject; `origin` says where each annotation came from.")  # fmt: skip
    if settings.get("validation"):
        lines.append(
            "Validators judged annotations as agree, partially agree or disagree "
            "(BooookScore's precision protocol); the judgments configuration holds them."
        )
    return lines
