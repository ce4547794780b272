"""Where researchers get signed annotator links: `flask list-documents --annotator NAME`,
`flask validation list-rounds --annotator NAME` and the study page; each link opens."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import pytest

from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from tests.support.signed_links import sign

KEY = "test-secret-key"  # tests/support/apps.py make_test_config's SECRET_KEY


@pytest.fixture
def study(app, runner, tmp_path):
    """Two documents (one with a space in its id) and a validation round."""
    import_documents(
        [
            DocumentInput("doc-1", None, ("Anna met Bob.", "They left.")),
            DocumentInput("doc two", None, ("Ada met Bea.",)),
        ]
    )
    items = tmp_path / "items.jsonl"
    items.write_text(
        '{"id": "i1", "source": "human", "document_id": "doc-1", "span": {"text": "Bob"}}\n'
    )
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(items)])
    assert result.exit_code == 0, result.output


def opens(app, link: str) -> bool:
    """Whether the link, opened in a fresh browser with unsigned names off, redirects to
    a session page."""
    app.config["UNSIGNED_ANNOTATOR_LINKS"] = False
    parts = urlsplit(link)
    response = app.test_client().get(parts.path, query_string=parts.query)
    return response.status_code == 302 and response.headers["Location"].startswith(("/s/", "/v/"))


def test_list_documents_prints_signed_links(app, runner, study):
    result = runner.invoke(args=["list-documents", "--annotator", " José Ñ&1 "])
    assert result.exit_code == 0, result.output
    name = "José Ñ&1"
    links = re.findall(r"http://127\.0\.0\.1:5000/\S+", result.output)
    sig1, sig2, sig_start = (sign(KEY, t, name) for t in ("doc-1", "doc two", "start"))
    assert links == [
        f"http://127.0.0.1:5000/annotate/doc%20two?annotator=Jos%C3%A9+%C3%91%261&sig={sig2}",
        f"http://127.0.0.1:5000/annotate/doc-1?annotator=Jos%C3%A9+%C3%91%261&sig={sig1}",
        f"http://127.0.0.1:5000/start?annotator=Jos%C3%A9+%C3%91%261&sig={sig_start}",
    ]
    assert all(opens(app, link) for link in links)
    plain = runner.invoke(args=["list-documents"])
    assert "sig=" not in plain.output


@pytest.mark.parametrize("name", ["", "x" * 201, "tab\there"])
def test_list_documents_refuses_a_name_no_link_can_carry(runner, study, name):
    result = runner.invoke(args=["list-documents", "--annotator", name])
    assert result.exit_code == 2
    assert "--annotator" in result.output
    assert "Traceback" not in result.output


def test_list_rounds_prints_signed_validator_links(app, runner, study):
    result = runner.invoke(
        args=["validation", "list-rounds", "--annotator", "val-1", "--base-url", "https://x.org/"]
    )
    assert result.exit_code == 0, result.output
    link = f"https://x.org/validate/r1?annotator=val-1&sig={sign(KEY, 'round:r1', 'val-1')}"
    assert link in result.output
    assert opens(app, link)
    assert "sig=" not in runner.invoke(args=["validation", "list-rounds"]).output


def test_study_page_signs_links_for_a_name(app, researcher_client, study):
    response = researcher_client.get("/research/study", query_string={"annotator": "ann<b>"})
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "ann<b>" not in page  # the name is text, never markup
    values = [html.unescape(v) for v in re.findall(r'value="([^"]*sig=[^"]*)"', page)]
    assert values == [
        f"http://localhost/start?annotator=ann%3Cb%3E&sig={sign(KEY, 'start', 'ann<b>')}",
        f"http://localhost/validate/r1?annotator=ann%3Cb%3E&sig={sign(KEY, 'round:r1', 'ann<b>')}",
    ]
    assert all(opens(app, link) for link in values)


def test_study_page_explains_a_bad_name(researcher_client, study):
    page = researcher_client.get("/research/study?annotator=" + "x" * 201).get_data(as_text=True)
    assert 'aria-invalid="true"' in page
    assert "An annotator name must be 1-200 printable characters." in page
    assert not re.search(r'value="[^"]*sig=', page)
    assert 'id="annotator-name"' in researcher_client.get("/research/study").get_data(as_text=True)
