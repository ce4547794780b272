"""Property: a span's offsets survive import normalisation, the JSON API and the export.

Random text with astral characters (emoji), combining marks, right-to-left script and
CRLF line ends is imported through the real file parser; a random span of the stored
text is saved through the API; what the API returns, what the database holds and what
the JSONL export says are all exactly `paragraph[start:end]` in Python code points.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.exports.record import ExportFilter, iter_annotation_records
from app.imports.document_formats import parse_documents
from app.imports.document_store import import_documents
from tests.support.worker_api import body, save, token_from

pieces = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=6),
    st.sampled_from(
        ["😀", "👩🏽‍🚀", "🚢", "e\u0301", "n\u0303", "שלום", "مرحبا", "\r\n", "Zoë", " ", "Łukasz"]
    ),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(parts=st.lists(pieces, min_size=1, max_size=30), data=st.data())
def test_span_round_trip_is_identity(app, client, tmp_path, parts, data):
    raw = "".join(parts)
    expected = unicodedata.normalize("NFC", raw.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not expected or "\n\n" in re.sub(r"\n[^\S\n]*\n", "\n\n", expected):
        return  # blank, or would split into several paragraphs: not this property
    doc_id = f"prop-{uuid.uuid4().hex[:12]}"
    path = tmp_path / f"{doc_id}.jsonl"
    path.write_text(json.dumps({"id": doc_id, "paragraphs": [raw]}) + "\n", encoding="utf-8")
    import_documents(parse_documents(path))

    token = token_from(client.get(f"/annotate/{doc_id}?annotator=prop"))
    page = client.get(f"/s/{token}").get_data(as_text=True)
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    stored = client.get(f"/api/sessions/{token}").get_json()["document"]["paragraphs"][0]["text"]
    assert stored == expected

    start = data.draw(st.integers(0, len(stored) - 1))
    end = data.draw(st.integers(start + 1, len(stored)))
    if not stored[start:end].strip():
        return
    span = {"paragraph_id": 0, "start": start, "end": end, "text": stored[start:end]}
    saved = save(client, token, body(span=span), headers={"X-CSRFToken": csrf})
    assert saved.status_code == 201, saved.get_json()
    assert saved.get_json()["span"] == span

    listed = client.get(f"/api/sessions/{token}").get_json()["annotations"]
    assert [a["span"] for a in listed] == [span]

    exported = list(iter_annotation_records(ExportFilter(document=doc_id)))
    assert len(exported) == 1
    assert exported[0]["span"] == span
    assert stored[exported[0]["span"]["start"] : exported[0]["span"]["end"]] == span["text"]
