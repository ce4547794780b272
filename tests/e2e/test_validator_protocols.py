"""The validator page follows the round's taxonomy (issue 14 point 9): items with a category
and no question get the category reasons and instructions, items with a question
BooookScore's; the instructions open on the first item; keys 1/2/3 give the verdicts (the
buttons show them, their accessible names stay Agree / Partially agree / Disagree); "Saved."
goes when the next item loads. axe-clean, no sideways scroll from 360 px up."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.models import ValidationJudgment
from tests.support.axe import violations
from tests.support.research import add_researcher, log_in, overflow_by_width
from tests.support.validation import public_ids
from tests.support.validator_round import seed_round_of

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn. Łukasz waved at the ship.",
)


def seed_mixed_round(live, tmp_path: Path) -> None:
    """Two category items (our export's kind: a category, no question) and one with a
    question (BooookScore's kind), in the order the seed gives: the test reads each item."""
    items = [
        {
            "id": "c1",
            "source": "human",
            "document_id": "voyage",
            "span": {"text": "Łukasz", "paragraph_id": 0},
            "category": "new-person",
        },
        {
            "id": "c2",
            "source": "human",
            "document_id": "voyage",
            "span": {"text": "the ship", "paragraph_id": 1},
            "category": "repetition",
            "paired_span": {"text": "The ship", "paragraph_id": 1},
        },
        {
            "id": "q1",
            "source": "gpt-4",
            "document_id": "voyage",
            "span": {"text": "Zoë smiled."},
            "question": "Why does she smile?",
        },
    ]
    seed_round_of(live, tmp_path, "mixed", items, seed=1, paragraphs=PARAGRAPHS)


def test_reasons_instructions_and_keys_follow_each_item(page: Page, live_server, tmp_path):
    seed_mixed_round(live_server, tmp_path)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/validate/mixed?annotator=val-keys")
    progress = page.locator(".js-progress")
    expect(progress).to_have_text("Item 1 of 3")

    # The instructions are open on the first item.
    toggle = page.get_by_role("button", name="Instructions")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    instructions = page.get_by_role("region", name="How to judge")
    expect(instructions).to_be_visible()

    # The buttons show their keys; their accessible names are unchanged.
    for name, key in (("Agree", "1"), ("Partially agree", "2"), ("Disagree", "3")):
        button = page.get_by_role("button", name=name, exact=True)
        expect(button).to_have_text(f"{name} {key}")
        expect(button).to_have_attribute("aria-keyshortcuts", key)
    seen = {"first item": violations(page)}
    overflow = {"first item": overflow_by_width(page)}
    page.set_viewport_size({"width": 1280, "height": 800})

    status = page.get_by_role("status")
    judged: dict[str, str] = {}
    for number in (1, 2, 3):
        expect(progress).to_have_text(f"Item {number} of 3")
        expect(status).to_have_text("")  # "Saved." was about the previous item
        question = page.locator(".js-question")
        has_question = question.is_visible()
        reasons = page.get_by_role("group", name="Reasons")
        if has_question:
            expect(reasons.get_by_role("checkbox", name="A. Not relevant to span")).to_be_visible()
            expect(page.get_by_role("checkbox", name="Not an error")).to_be_hidden()
            expect(instructions).to_contain_text("The question is relevant to the span")
            key, verdict, reason = "2", "partial", "B. Answered in the summary"
        else:
            expect(reasons.get_by_role("checkbox", name="Not an error")).to_be_visible()
            expect(reasons.get_by_role("checkbox", name="Wrong category")).to_be_visible()
            expect(page.get_by_role("checkbox", name="A. Not relevant to span")).to_be_hidden()
            expect(instructions).to_contain_text("the span is not an error")
            # The error type is explained with the taxonomy's description.
            expect(page.locator(".js-label-descriptions")).not_to_be_empty()
            key, verdict, reason = "3", "disagree", "Not an error"
        # A digit typed in the explanation is text, not a verdict.
        explanation = page.get_by_role("textbox", name="Explanation (optional)")
        explanation.fill("")
        explanation.press_sequentially("13")
        expect(explanation).to_have_value("13")
        expect(progress).to_have_text(f"Item {number} of 3")
        # The key without a reason is refused in the page, like the button.
        page.locator(".js-document").focus()
        page.keyboard.press(key)
        expect(page.get_by_role("alert")).to_be_visible()
        if number == 1:
            seen["reason missing"] = violations(page)
        reasons.get_by_role("checkbox", name=reason).check()
        page.locator(".js-document").focus()
        page.keyboard.press(key)
        judged["question" if has_question else f"category-{number}"] = verdict
        if number < 3:
            expect(progress).to_have_text(f"Item {number + 1} of 3")
    expect(page.locator(".js-code")).not_to_be_empty()

    with live_server.app.app_context():
        stored = db.session.scalars(db.select(ValidationJudgment)).all()
        got = sorted((j.verdict, tuple(j.reasons), j.explanation) for j in stored)
        db.session.remove()
    assert got == sorted(
        [("disagree", ("Not an error",), "13")] * 2
        + [("partial", ("B. Answered in the summary",), "13")]
    )
    # The round's report, with its precision chart, is as clean.
    add_researcher(live_server)
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/research/rounds/mixed")
    chart = page.get_by_role("img", name="Precision per group with 95% intervals")
    expect(chart).to_be_visible()
    captions = chart.locator(".chart__group-caption")
    expect(captions).to_have_text(["By source", "By category", "By document"])
    seen["report"] = violations(page)
    overflow["report"] = overflow_by_width(page)
    assert not any(seen.values()), seen
    assert not any(any(v.values()) for v in overflow.values()), overflow


def test_category_reasons_are_refused_for_a_question_item(page: Page, live_server, tmp_path):
    """The server checks reasons against the item's own protocol."""
    seed_mixed_round(live_server, tmp_path)
    page.goto(f"{live_server.url}/validate/mixed?annotator=val-api")
    expect(page.locator(".js-progress")).to_have_text("Item 1 of 3")
    token = page.url.rsplit("/", 1)[-1]
    csrf = page.locator('meta[name="csrf-token"]').get_attribute("content")
    with live_server.app.app_context():
        q1 = public_ids("mixed")["q1"]  # the id validators see
    answer = page.request.post(
        f"{live_server.url}/api/validators/{token}/judgments",
        data={"item_id": q1, "verdict": "disagree", "reasons": ["Not an error"]},
        headers={"X-CSRFToken": csrf},
    )
    assert answer.status == 422
    assert answer.json()["error"]["code"] == "invalid_reason"
