"""The researcher console in Chromium (issue 14 points 12 and 13): a session opens
read-only from its document's page, drawn by the annotator page's own code with the
worker's highlights and table and no way to act; a round is created from the console with
errors shown next to their fields; the rounds page gives validator links. axe-clean, and no
sideways scroll from 360 px up."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import Page, expect

from app.core.security import capability_csrf_token
from tests.support.annotate_page import seed_document
from tests.support.axe import violations
from tests.support.research import WIDTHS, add_researcher, log_in, overflow_by_width
from tests.support.worker_api import token_from

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn. Zoë smiled again, <b>not</b> a word.",
)


def _work(live, annotator: str, *, submit: bool) -> None:
    """A worker's session through the worker API: one singleton, one paired, reaching
    paragraph 2 (id 1)."""
    client = live.app.test_client()
    token = token_from(client.get(f"/annotate/voyage?annotator={annotator}"))
    with live.app.app_context():
        headers = {"X-CSRFToken": capability_csrf_token("annotate", token)}
    url = f"/api/sessions/{token}"

    def span(paragraph, needle):
        start = PARAGRAPHS[paragraph].index(needle)
        return {
            "paragraph_id": paragraph,
            "start": start,
            "end": start + len(needle),
            "text": needle,
        }

    first = {
        "id": str(uuid.uuid4()),
        "category": "new-person",
        "span": span(0, "Łukasz"),
        "paired_span": None,
        "comment": "Who is he?",
    }
    assert client.post(f"{url}/annotations", json=first, headers=headers).status_code == 201
    assert (
        client.put(f"{url}/position", json={"paragraph_id": 1}, headers=headers).status_code == 200
    )
    second = {
        "id": str(uuid.uuid4()),
        "category": "repetition",
        "span": span(1, "Zoë smiled again"),
        "paired_span": span(0, "Zoë smiled."),
        "comment": None,
    }
    assert client.post(f"{url}/annotations", json=second, headers=headers).status_code == 201
    if submit:
        assert client.post(f"{url}/submit", json={}, headers=headers).status_code == 200


def test_a_session_opens_read_only_from_its_document(page: Page, live_server):
    seed_document(live_server, "voyage", PARAGRAPHS, title="A voyage")
    _work(live_server, "ana", submit=True)
    add_researcher(live_server)
    log_in(page, live_server.url)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.get_by_role("region", name="Documents").get_by_role("link", name="voyage").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("voyage")
    seen = {"document page": violations(page)}
    overflow = {"document page": overflow_by_width(page)}
    page.set_viewport_size({"width": 1280, "height": 800})

    api_calls: list[str] = []
    page.on("request", lambda r: api_calls.append(r.url) if "/api/" in r.url else None)
    page.get_by_role("link", name="direct:ana").click()
    expect(page).to_have_url(re.compile(r"/research/sessions/\d+$"))
    root = page.locator('[data-module="annotator"]')
    expect(root).to_have_attribute("data-ready", "true")
    # The annotator page's code draws it: Context, Current Paragraph, exact text.
    context = page.get_by_role("region", name="Context")
    current = page.get_by_role("region", name="Current Paragraph")
    expect(context.locator('[data-paragraph="0"]')).to_have_text(PARAGRAPHS[0])
    expect(current.locator('[data-paragraph="1"]')).to_have_text(PARAGRAPHS[1])
    # Every highlight of the worker: the singleton, the paired span and its partner.
    for text in ("Łukasz", "Zoë smiled again", "Zoë smiled."):
        expect(page.locator(".hl[data-annotation]", has_text=text).first).to_be_visible()
    table = page.get_by_role("region", name="Previous annotations")
    expect(table.get_by_role("row")).to_have_count(3)  # header + 2
    for button in table.get_by_role("button", name="Remove").all():
        expect(button).to_be_disabled()
    expect(
        page.get_by_role("button", name="New person not introduced", exact=True)
    ).to_be_disabled()
    expect(page.get_by_role("button", name="Add", exact=True)).to_be_disabled()
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()
    # What a researcher reads says which paragraph numbering it uses.
    expect(page.get_by_text("paragraph 1 is id 0")).to_be_visible()
    records = page.get_by_role("region", name="Annotations as exported")
    expect(records.get_by_role("row")).to_have_count(3)
    expect(records).to_contain_text("paragraph 1 (id 0)")
    expect(records).to_contain_text("paragraph 2 (id 1)")
    # The page's own numbers (progress line, table) say their export id too.
    progress = page.locator(".js-progress")
    expect(progress).to_have_text("Paragraph 2 (id 1) of 2")
    cells = table.locator(".previous__paragraph")
    expect(cells).to_have_text(["1 (id 0)", "2 (id 1) (and 1 (id 0))"])
    # Reading back to paragraph 1 works; nothing is ever sent.
    page.get_by_role("button", name="Previous paragraph").click()
    expect(current.locator('[data-paragraph="0"]')).to_have_text(PARAGRAPHS[0])
    expect(progress).to_have_text("Paragraph 1 (id 0) of 2")
    assert api_calls == []
    seen["session viewer"] = violations(page)
    overflow["session viewer"] = overflow_by_width(page)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path="/tmp/console-ux-viewer.png", full_page=True)
    assert not any(seen.values()), seen
    # The worker page's table turns into cards on narrow widths: the viewer (that page
    # plus the exported rows, which scroll in their own box) never scrolls sideways.
    assert all(overflow["document page"][w] == 0 for w in WIDTHS), overflow
    assert all(overflow["session viewer"][w] == 0 for w in WIDTHS), overflow


def test_a_round_is_created_from_the_console(page: Page, live_server, context):
    seed_document(live_server, "voyage", PARAGRAPHS, title="A voyage")
    _work(live_server, "ana", submit=True)
    _work(live_server, "ben", submit=False)
    add_researcher(live_server)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    log_in(page, live_server.url)
    page.get_by_role("navigation", name="Research console").get_by_role(
        "link", name="Validation rounds"
    ).click()
    form = page.get_by_role("region", name="Create a round")
    seen = {"rounds, none yet": violations(page)}

    name = form.get_by_role("textbox", name="Round name")
    name.fill("round one")
    form.get_by_role("spinbutton", name="Validators per item").fill("0")
    form.get_by_role("button", name="Create round").click()
    form = page.get_by_role("region", name="Create a round")
    name = form.get_by_role("textbox", name="Round name")
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(name).to_have_accessible_description(re.compile("Use letters, digits"))
    per_item = form.get_by_role("spinbutton", name="Validators per item")
    expect(per_item).to_have_accessible_description(re.compile("from 1 to 100"))
    seen["errors"] = violations(page)
    overflow = {"errors": overflow_by_width(page)}
    page.set_viewport_size({"width": 1280, "height": 800})

    name.fill("round-1")
    per_item.fill("2")
    form.get_by_role("spinbutton", name="Seed (optional)").fill("5")
    form.get_by_role("button", name="Create round").click()
    expect(page.get_by_role("status").filter(has_text="Created round")).to_have_text(
        "Created round round-1: 2 item(s), seed 5. "
        "Left out 2 annotation(s) of sessions not submitted."
    )
    rounds = page.get_by_role("region", name="Rounds")
    expect(rounds.get_by_role("link", name="round-1")).to_be_visible()
    links = page.get_by_role("region", name="Links for validators")
    prolific = links.get_by_label("Study URL for Prolific (round-1)")
    expect(prolific).to_have_value(
        f"{live_server.url}/validate/round-1?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    links.get_by_role("button", name="Copy Study URL for Prolific (round-1)").click()
    assert page.evaluate("navigator.clipboard.readText()") == prolific.input_value()
    expect(links.get_by_label("ExternalQuestion XML (round-1)")).to_have_value(
        re.compile(r"<ExternalURL>.*/validate/round-1</ExternalURL>")
    )
    seen["a round"] = violations(page)
    overflow["a round"] = overflow_by_width(page)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path="/tmp/console-ux-rounds.png", full_page=True)
    assert not any(seen.values()), seen
    assert not any(any(v.values()) for v in overflow.values()), overflow
