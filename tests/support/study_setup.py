"""The console's study setup pages (app/studies/setup_pages.py) in tests: a study the
logged-in researcher owns, the CSRF token of a page, and an upload through the form."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

from flask.testing import FlaskClient

from app.jobs import queue as analysis_queue
from app.models import Researcher, Study
from app.studies import create_study, store_taxonomy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "studies"


def owned_study(researcher: Researcher, slug: str = "pilot") -> Study:
    """An open study with pilot-v1.yaml as its taxonomy, owned by `researcher`."""
    study = create_study(slug, "Pilot", status="open", owner=researcher)
    store_taxonomy(study, (FIXTURES / "pilot-v1.yaml").read_bytes(), "pilot-v1.yaml")
    return study


def csrf_of(client: FlaskClient, url: str) -> str:
    """The CSRF token of the form on the page at `url`."""
    page = client.get(url).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page)[1]


def upload_taxonomy(client: FlaskClient, slug: str, name: str, raw: bytes):
    """Check a taxonomy file through the upload form; the response."""
    url = f"/research/studies/{slug}/taxonomy/upload"
    form = {
        "csrf_token": csrf_of(client, url),
        "action": "check",
        "taxonomy": (io.BytesIO(raw), name),
    }
    return client.post(url, data=form, content_type="multipart/form-data")


def hidden_fields(page: str) -> dict[str, str]:
    """The hidden fields of the confirmation form a checked taxonomy's page shows."""
    save = page.index('name="action" value="save"')
    form = page[page.rindex("<form", 0, save) : page.index("</form>", save)]
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))


def upload_documents(client: FlaskClient, slug: str, files: dict[str, bytes], **fields):
    """Send files through the documents page's upload form; the response."""
    url = f"/research/studies/{slug}/documents"
    form = {
        "csrf_token": csrf_of(client, url),
        "documents": [(io.BytesIO(data), name) for name, data in files.items()],
        **fields,
    }
    return client.post(f"{url}/upload", data=form, content_type="multipart/form-data")


def wait_for_upload(client: FlaskClient, slug: str, upload_id: int, timeout: float = 60) -> list:
    """Poll the upload's JSON until it finishes; every state seen, the last finished."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get(f"/research/studies/{slug}/documents/uploads/{upload_id}.json")
        assert state.status_code == 200, state.data
        seen.append(state.get_json())
        if seen[-1]["finished"]:
            analysis_queue.wait_for_background()
            return seen
        time.sleep(0.05)
    raise TimeoutError(f"upload {upload_id} not finished after {timeout} s: {seen[-1]}")
