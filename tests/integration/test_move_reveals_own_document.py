"""A move reveals the next paragraph of the session's OWN document, whichever document was
imported first (a bug: on SQLite the move's RETURNING subquery was rendered unqualified,
`WHERE document_id = document_id`, and answered the first document's paragraph)."""

from __future__ import annotations

from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from tests.support.worker_api import csrf, start


def test_a_move_reveals_the_paragraph_of_the_sessions_document(app, client):
    import_documents(
        [
            DocumentInput("first", "First", ("A0 first.", "A1 first.", "A2 first.")),
            DocumentInput("second", "Second", ("B0 second.", "B1 second.", "B2 second.")),
        ]
    )
    for document, prefix in (("second", "B"), ("first", "A")):
        token = start(client, document, annotator=f"reader-{document}")
        for paragraph_id in (1, 2):
            answer = client.put(
                f"/api/sessions/{token}/position",
                json={"paragraph_id": paragraph_id},
                headers=csrf(token),
            )
            assert answer.status_code == 200, answer.data
            texts = [p["text"] for p in answer.get_json()["paragraphs"]]
            assert texts == [f"{prefix}{paragraph_id} {document}."]
        session = client.get(f"/api/sessions/{token}").get_json()
        assert [p["text"] for p in session["document"]["paragraphs"]] == [
            f"{prefix}{n} {document}." for n in range(3)
        ]
