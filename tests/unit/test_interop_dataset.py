"""The Hugging Face dataset (app.interop.dataset_card) and keyed pseudonyms
(app.interop.pseudonyms); the folder is loaded with the real `datasets` library, offline."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

import pytest
import yaml

from app.interop.dataset_card import (
    CONFIGS,
    CardFigure,
    StudyFacts,
    check_license,
    dataset_files,
    figures_from_report,
    hub_languages,
    protocol_lines,
    pseudonymised,
    size_category,
)
from app.interop.pseudonyms import Pseudonyms, derive_key, pseudonym
from tests.support.interop import ALICE, BOB, DOCUMENTS, TAXONOMY, offline_datasets, study_records

SECRET = "server secret of the study"


def sessions() -> list[dict]:
    return [
        {"session_id": "1", "document_id": "ch-1", "annotator_id": ALICE, "platform": "prolific",
         "platform_session_id": "60aa11bb22cc33dd44ee55ff", "assignment_id": None,
         "status": "submitted", "outcome": "completed", "completion_code": "C0DE1",
         "annotations": 7, "flagged": False},
        {"session_id": "2", "document_id": "ch-1", "annotator_id": BOB, "platform": "mturk",
         "platform_session_id": None, "assignment_id": "3ASSIGNMENT0000000000000000000",
         "status": "submitted", "outcome": "completed", "completion_code": "C0DE2",
         "annotations": 1, "flagged": True},
    ]  # fmt: skip


def judgments() -> list[dict]:
    return [
        {"item_id": "it-1", "validator": "prolific:60ffeeddccbbaa9988776655", "verdict": "agree",
         "reasons": [], "explanation": None},
        {"item_id": "it-2", "validator": "prolific:60ffeeddccbbaa9988776655",
         "verdict": "disagree", "reasons": ["Not an error"], "explanation": "Fine as it is."},
    ]  # fmt: skip


def rows() -> dict[str, list[dict]]:
    return {
        "annotations": study_records(),
        "documents": [
            {"document_id": key, "language": "en", "paragraphs": value}
            for key, value in DOCUMENTS.items()
        ],
        "sessions": sessions(),
        "judgments": judgments(),
    }


REPORT = {
    "booookscore": 87.5,
    "errors_per_sentence": {"new-person": 12.5, "missing-info": 0.0},
    "agreement": {
        "span_f1": {"value": 41.25, "ci95": [30.0, 52.5], "unit": "span F1; 95% CI: bootstrap"},
        "gamma": {"value": None, "ci95": None, "unit": "gamma (Mathet et al. 2015)"},
    },
    "excluded": {
        "documents": ["check-1"],
        "annotators": [{"annotator_id": BOB, "reason": "flagged"}],
    },
}


def facts(**changes) -> StudyFacts:
    values = {
        "title": "Points of confusion",
        "license": "cc-by-4.0",
        "languages": ["en", "en-GB"],
        "taxonomy": TAXONOMY,
        "protocol": protocol_lines({"platforms": ["Prolific", "MTurk"], "consent": True,
                                    "annotators_per_document": 3, "surveys": ["after"],
                                    "training": True, "attention_checks": "flag",
                                    "severities": True}),
        "figures": figures_from_report(REPORT),
        "excluded": REPORT["excluded"],
    } | changes  # fmt: skip
    return StudyFacts(**values)


def front_matter(readme: str) -> dict:
    """The card's YAML, found as the Hub finds it (huggingface_hub's metadata regex)."""
    found = re.match(r"^---\s*\n([\S\s]*?)\n---\s*\n", readme)
    assert found is not None
    return yaml.safe_load(found.group(1))


def write(folder: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return folder


# --- pseudonyms --------------------------------------------------------------------------


def test_pseudonyms_are_keyed_stable_and_short():
    pseudonyms = Pseudonyms(SECRET)
    first = pseudonyms(ALICE)
    assert first == pseudonyms(ALICE) == Pseudonyms(SECRET)(ALICE)
    assert first.startswith("anon-") and len(first) == len("anon-") + 16
    assert first != Pseudonyms("another secret")(ALICE) and first != pseudonyms(BOB)
    key = derive_key(SECRET)
    assert first == pseudonym(ALICE, key)
    # Never the secret itself as key: a pseudonym is not a signature of the id.
    plain = hmac.new(SECRET.encode(), ALICE.encode(), hashlib.sha256).hexdigest()
    assert first.removeprefix("anon-") != plain[:16]
    assert pseudonyms(None) is None


def test_kept_ids_stay_and_an_empty_secret_is_refused():
    assert Pseudonyms(None, keep_ids=True)(ALICE) == ALICE
    with pytest.raises(ValueError, match="a pseudonym key needs a secret"):
        Pseudonyms("")


# --- metadata ----------------------------------------------------------------------------


def test_size_categories_follow_the_hub_buckets():
    cases = {0: "n<1K", 999: "n<1K", 1000: "1K<n<10K", 9999: "1K<n<10K", 10**4: "10K<n<100K",
             10**6 - 1: "100K<n<1M", 10**6: "1M<n<10M", 10**12 - 1: "100B<n<1T",
             10**12: "n>1T"}  # fmt: skip
    assert {n: size_category(n) for n in cases} == cases


def test_licenses_are_the_hub_s_identifiers():
    assert check_license("cc-by-nc-4.0") == "cc-by-nc-4.0"
    with pytest.raises(ValueError, match="'CC-BY' is not a Hugging Face license identifier"):
        check_license("CC-BY")


def test_languages_are_iso_codes_with_the_full_tags_beside():
    assert hub_languages(["zh-Hans", "en-GB", "en", None, "", "not a tag"]) == (
        ["en", "zh"],
        ["en", "en-GB", "zh-Hans"],
    )


def test_the_card_metadata_declares_every_configuration_with_rows():
    files = dataset_files(rows(), facts(), Pseudonyms(SECRET))
    assert front_matter(files["README.md"]) == {
        "pretty_name": "Points of confusion",
        "license": "cc-by-4.0",
        "language": ["en"],
        "language_details": ["en", "en-GB"],
        "task_categories": ["token-classification"],
        "tags": ["human-evaluation", "error-annotation", "span-annotation"],
        "annotations_creators": ["crowdsourced"],
        "size_categories": ["n<1K"],
        "configs": [
            {"config_name": "annotations", "data_files": "data/annotations.jsonl",
             "default": True},
            {"config_name": "documents", "data_files": "data/documents.jsonl"},
            {"config_name": "sessions", "data_files": "data/sessions.jsonl"},
            {"config_name": "judgments", "data_files": "data/judgments.jsonl"},
        ],
    }  # fmt: skip
    assert sorted(files) == ["README.md", *sorted(f"data/{c}.jsonl" for c in CONFIGS)]


def test_a_configuration_without_rows_has_no_file_and_the_card_says_so():
    files = dataset_files(rows() | {"judgments": []}, facts(), Pseudonyms(SECRET))
    assert "data/judgments.jsonl" not in files
    configs = [c["config_name"] for c in front_matter(files["README.md"])["configs"]]
    assert configs == ["annotations", "documents", "sessions"]
    assert "No judgments: the study has none, so no file." in files["README.md"]
    with pytest.raises(ValueError, match="not configurations of the dataset: gold"):
        dataset_files({"gold": []}, facts(), Pseudonyms(SECRET))


# --- prose -------------------------------------------------------------------------------


def test_the_prose_gives_taxonomy_protocol_counts_figures_exclusions_and_offsets():
    pseudonyms = Pseudonyms(SECRET)
    readme = dataset_files(rows(), facts(), pseudonyms)["README.md"]
    for expected in (
        "# Points of confusion",
        "Error annotations of 2 document(s) by 2 annotator(s): 10 annotation rows, "
        "9 error unit(s).",
        "| `sessions` | `data/sessions.jsonl` | 2 | one reading of one document by one "
        "annotator, with its outcome |",
        "| `repetition` | Repetition | paired | The text repeats an earlier passage. |",
        "| `major` | Major | 5 |  |",
        "- Each document was assigned to 3 annotators, who read it one paragraph at a time",
        "- Steps: consent, then training with feedback, then the task, then a survey after it.",
        "| span\\_f1 | 41.25 | [30, 52.5] | span F1; 95% CI: bootstrap |",
        "| gamma | — | — | gamma (Mathet et al. 2015) |",
        "| BooookScore (study) | 87.5 | — | 100 × (1 − error units / sentences) per submitted",
        "| Errors per 100 sentences: missing-info | 0 | — | occurrences of the category",
        "- 1 attention-check document(s), counted in no figure: `check-1`.",
        f"- Annotator `{pseudonyms(BOB)}`: flagged by their attention checks;",
        "`start` and `end` count Unicode code points (not bytes, not UTF-16 units) of that "
        "paragraph, end exclusive",
        "are pseudonyms: `anon-` and 16 hex digits of HMAC-SHA256",
    ):
        assert expected in readme, expected


def test_no_id_of_a_person_is_left_in_a_pseudonymised_folder():
    files = dataset_files(rows(), facts(), Pseudonyms(SECRET))
    everything = "\n".join(files.values())
    for raw in ("5f3c0a1b2c3d4e5f60718293", "A1B2C3D4E5F6G7", "60aa11bb22cc33dd44ee55ff",
                "3ASSIGNMENT", "60ffeeddccbbaa9988776655", "C0DE1"):  # fmt: skip
        assert raw not in everything, raw
    kept = dataset_files(rows(), facts(), Pseudonyms(None, keep_ids=True))
    assert ALICE in kept["data/annotations.jsonl"] and BOB in kept["README.md"]
    assert "exported with `--keep-ids`" in kept["README.md"]


def test_only_identifying_fields_are_pseudonymised():
    pseudonyms = Pseudonyms(SECRET)
    (first, second) = pseudonymised("sessions", sessions(), pseudonyms)
    assert first["annotator_id"] == pseudonyms(ALICE)
    assert first["platform_session_id"] == pseudonyms("60aa11bb22cc33dd44ee55ff")
    assert first["assignment_id"] is None and first["document_id"] == "ch-1"
    assert second["completion_code"] == pseudonyms("C0DE2") and second["flagged"] is True


def test_text_from_the_study_cannot_inject_html_markdown_or_yaml():
    hostile = dict(TAXONOMY["categories"][0], name="<img src=x onerror=alert(1)>",
                   description="*bold* [link](javascript:x) | cell\nnext")  # fmt: skip
    title = "Study\n---\nlicense: mit\n<script>"
    readme = dataset_files(
        rows(), facts(title=title, taxonomy={"categories": [hostile]}), Pseudonyms(SECRET)
    )["README.md"]
    meta = front_matter(readme)
    assert meta["pretty_name"] == "Study --- license: mit <script>"  # one line, as data
    assert meta["license"] == "cc-by-4.0"
    prose = readme.split("\n---\n", 1)[1]
    assert "<img" not in prose and "<script>" not in prose
    assert "# Study --- license: mit &lt;script&gt;" in prose
    assert "&lt;img src=x onerror=alert(1)&gt;" in readme
    assert "\\*bold\\* \\[link\\](javascript:x) \\| cell next" in readme


def test_figures_of_a_study_report_keep_their_definitions():
    assert figures_from_report(REPORT)[3] == CardFigure(
        "span_f1", 41.25, (30.0, 52.5), "span F1; 95% CI: bootstrap"
    )
    assert figures_from_report({}) == []


# --- loaded with the datasets library ----------------------------------------------------


@pytest.fixture
def datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The `datasets` library, offline, caching under tmp_path (tests.support.interop)."""
    return offline_datasets(tmp_path, monkeypatch)


def test_load_dataset_loads_every_configuration_as_exported(datasets, tmp_path: Path):
    files = dataset_files(rows(), facts(), Pseudonyms(SECRET))
    folder = write(tmp_path / "dataset", files)
    cache = str(tmp_path / "cache")
    assert sorted(datasets.get_dataset_config_names(str(folder))) == sorted(CONFIGS)
    for config in CONFIGS:
        expected = [json.loads(line) for line in files[f"data/{config}.jsonl"].splitlines()]
        loaded = datasets.load_dataset(str(folder), config, cache_dir=cache)
        assert list(loaded) == ["train"]
        assert loaded["train"].to_list() == expected, config
    default = datasets.load_dataset(str(folder), cache_dir=cache)["train"]
    assert default.to_list()[0]["span"] == {"paragraph_id": 0, "start": 8, "end": 14,
                                            "text": "Łukasz"}  # fmt: skip
    assert len(default) == len(study_records())
