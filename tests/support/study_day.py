"""One whole Prolific study for the browser tests (issue 27): consent, both surveys,
training on the practice text, severities, model suggestions on the task text and
Prolific's completion codes per outcome, on a fresh SQLite copy."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from tests.support.live_server import LiveServer, serving
from tests.support.severities import severity_taxonomy
from tests.support.training import PRACTICE_ID, practice_record

STUDY_ID = "study-27"
SESSION_ID = "session-27a"
WORKER = f"PROLIFIC_PID=60aa00000000000000000001&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}"
TASK_ID = "voyage"
TASK = (
    "Anna met Bob at the harbour. Nobody knew who Bob was.",
    "Then Anna met Bob again at the mill. It rained all day.",
    "Carol waved at the ship as it left the quay.",
)
# Two model suggestions on the first paragraph (Accept one, Edit the other), one on the
# second (Reject it).
SUGGESTIONS = (
    {"id": "s-bob", "document_id": TASK_ID, "category": "new-person",
     "span": {"text": "Bob", "paragraph_id": 0}, "question": "Who is Bob?"},
    {"id": "s-harbour", "document_id": TASK_ID, "category": "missing-info",
     "span": {"text": "at the harbour", "paragraph_id": 0}, "question": "Which harbour?"},
    {"id": "s-rain", "document_id": TASK_ID, "category": "ungrammatical",
     "span": {"text": "It rained all day.", "paragraph_id": 1}},
)  # fmt: skip
STUDY = f"""\
study:
  annotators_per_document: 3
  suggestions: show
  completion:
    completed: C1A2B3C4
    failed_training: CX9Y8Z7W
    failed_checks: CQ5R4S3T
    no_consent: CN1M2L3K
training:
  documents: [{PRACTICE_ID}]
  pass: {{recall: 0.5, precision: 0.5}}
  attempts: 2
consent: |
  ## About this study
  You will read a short summary and mark its errors. Your answers are anonymous.
survey:
  before:
    - {{key: native, type: choice, text: "Is English your first language?",
       options: ["Yes", "No"], required: true}}
  after:
    - {{key: difficulty, type: likert, scale: 5, text: "How hard was the task?",
       low: Very easy, high: Very hard, required: true}}
"""


def study_day_taxonomy(folder: Path) -> Path:
    """The default taxonomy with severities (minor q, major w) and the study above."""
    path = Path(severity_taxonomy(folder))
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("\nstudy:\n")
    tail = rest[rest.index("\nvalidation:\n") :]
    path.write_text(f"{head}\n{STUDY}{tail.lstrip(chr(10))}", encoding="utf-8")
    return path


@contextlib.contextmanager
def serving_study_day(tmp_path: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """The whole study served on a fresh SQLite copy: the practice and task texts and the
    suggestions imported with the real commands."""
    database = tmp_path / "e2e.sqlite3"
    shutil.copy(sqlite_template, database)
    taxonomy = study_day_taxonomy(tmp_path)
    documents = tmp_path / "documents.jsonl"
    records = [practice_record(), {"id": TASK_ID, "title": "A voyage", "paragraphs": TASK}]
    documents.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    suggestions = tmp_path / "suggestions.jsonl"
    suggestions.write_text("".join(json.dumps(s) + "\n" for s in SUGGESTIONS), "utf-8")
    with serving(f"sqlite:///{database}", TAXONOMY_PATH=str(taxonomy)) as live:
        runner = live.app.test_cli_runner()
        for args in (
            ["check-taxonomy", str(taxonomy)],
            ["import-documents", str(documents)],
            ["import-suggestions", str(suggestions), "--source", "model", "--format", "jsonl"],
        ):
            result = runner.invoke(args=args)
            assert result.exit_code == 0, result.output
        yield live
