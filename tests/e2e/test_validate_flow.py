"""The validator flow in Chromium: judge items with the buttons, resume after a reload,
get a completion code; the report counts exactly the judgments given, and the page never
shows where an item came from."""

from __future__ import annotations

import re

from playwright.sync_api import Page, Route, expect

from app.validation.report import compute_report
from app.validation.rounds import find_round
from tests.support.validator_round import PARAGRAPHS, SOURCES, seed_round

REASON_A = "A. Not relevant to span"
REASON_C = "C. Not addressing issues that matter"


def test_a_validator_judges_with_the_buttons(page: Page, live_server, tmp_path):
    seed_round(live_server, tmp_path)
    page.set_viewport_size({"width": 1300, "height": 900})
    page.goto(f"{live_server.url}/validate/blind-1?annotator=val-1")
    expect(page).to_have_url(re.compile(r"/v/[\w-]+$"))
    progress = page.locator(".js-progress")
    expect(progress).to_have_text("Item 1 of 3")
    agree = page.get_by_role("button", name="Agree", exact=True)
    partial = page.get_by_role("button", name="Partially agree")
    disagree = page.get_by_role("button", name="Disagree")

    # The document is shown whole, its text exactly as stored (markup shown as text).
    for n, text in enumerate(PARAGRAPHS):
        expect(page.locator(f'[data-paragraph="{n}"]')).to_have_text(text)
    expect(page.locator("mark.validator__hl--span")).to_have_count(1)

    given: list[str] = []
    # Item 1: Disagree without a reason is refused in the page, then given with one.
    disagree.click()
    expect(page.get_by_role("alert")).to_have_text(re.compile("Choose at least one reason"))
    expect(progress).to_have_text("Item 1 of 3")
    page.get_by_role("checkbox", name=REASON_A).check()
    page.get_by_role("textbox", name="Explanation (optional)").fill("Not confusing.")
    disagree.click()
    given.append("disagree")
    expect(progress).to_have_text("Item 2 of 3")
    for box in page.get_by_role("checkbox").all():  # the reasons start unchecked again
        expect(box).not_to_be_checked()

    # Reload in the middle: the same item comes back, nothing is lost.
    shown = page.locator(".js-span-text").text_content()
    page.reload()
    expect(progress).to_have_text("Item 2 of 3")
    expect(page.locator(".js-span-text")).to_have_text(shown)

    # An item with a question offers BooookScore's reasons, one with only a category the
    # taxonomy's category reasons (tests/e2e/test_validator_protocols.py).
    second_reason = REASON_C
    if not page.get_by_role("checkbox", name=REASON_C).is_visible():
        second_reason = "Wrong category"
    page.get_by_role("checkbox", name=second_reason).check()
    partial.click()
    given.append("partial")
    expect(progress).to_have_text("Item 3 of 3")
    agree.click()
    given.append("agree")

    expect(page.get_by_text("Thank you, there is nothing left for you to judge")).to_be_visible()
    code = page.locator(".js-code").text_content()
    assert code and len(code) >= 20
    page.screenshot(path=str(tmp_path / "validator-done.png"), full_page=True)

    with live_server.app.app_context():
        report = compute_report(find_round("blind-1"))
        session_code = code
    assert report["judgments"] == 3
    assert (report["agree"], report["partial"], report["disagree"]) == (
        given.count("agree"),
        given.count("partial"),
        given.count("disagree"),
    )
    assert report["reasons"] == {REASON_A: 1, second_reason: 1}
    assert session_code == code


def test_the_page_never_names_the_source(page: Page, live_server, tmp_path):
    seed_round(live_server, tmp_path)
    seen: list[str] = []
    page.on(
        "response",
        lambda response: (
            seen.append(response.text()) if "/api/validators/" in response.url else None
        ),
    )
    page.goto(f"{live_server.url}/validate/blind-1?annotator=val-2")
    progress = page.locator(".js-progress")
    for expected in ("Item 1 of 3", "Item 2 of 3", "Item 3 of 3"):
        expect(progress).to_have_text(expected)
        for source in SOURCES:
            assert source not in page.content()
        page.get_by_role("button", name="Agree", exact=True).click()
    expect(page.locator(".js-code")).not_to_be_empty()
    assert seen
    for body in seen:
        for source in SOURCES:
            assert source not in body
    assert "hiddensource" not in page.content()


def test_a_paired_item_highlights_both_spans(page: Page, live_server, tmp_path):
    seed_round(live_server, tmp_path)
    page.set_viewport_size({"width": 1300, "height": 900})
    page.goto(f"{live_server.url}/validate/blind-1?annotator=val-3")
    progress = page.locator(".js-progress")
    for _ in range(3):
        expect(progress).to_have_text(re.compile(r"Item \d of 3"))
        if page.locator(".js-span-text").text_content() == "Zoë smiled.":
            break
        before = progress.text_content()
        page.get_by_role("button", name="Agree", exact=True).click()
        expect(progress).not_to_have_text(before)
    expect(page.locator("mark.validator__hl--span")).to_have_text("Zoë smiled.")
    expect(page.locator("mark.validator__hl--paired")).to_have_text("Later, he said nothing")
    expect(page.get_by_text("Said twice?")).to_be_visible()
    expect(page.get_by_text("Repetition", exact=True)).to_be_visible()
    page.screenshot(path="/tmp/validator-paired.png", full_page=True)


def test_an_mturk_validator_submits_the_hit_to_mturk(page: Page, live_server, tmp_path):
    """ExternalQuestion HITs are submitted by the page: the done panel posts the assignment
    that began the work to MTurk; coming back with another assignmentId in the same browser
    resumes the work but never moves its submit target (docs/identity.md)."""
    seed_round(live_server, tmp_path)
    mturk = "workerId=W7&hitId=H1&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com"
    page.goto(f"{live_server.url}/validate/blind-1?{mturk}&assignmentId=A1")
    page.get_by_role("button", name="Agree", exact=True).click()
    page.goto(f"{live_server.url}/validate/blind-1?{mturk}&assignmentId=A2")  # another HIT
    progress = page.locator(".js-progress")
    expect(progress).to_have_text("Item 2 of 3")
    for expected in ("Item 2 of 3", "Item 3 of 3"):
        expect(progress).to_have_text(expected)
        page.get_by_role("button", name="Agree", exact=True).click()
    button = page.get_by_role("button", name="Send your work to MTurk")
    expect(button).to_be_visible()
    form = page.locator("form", has=button)
    expect(form).to_have_attribute("action", "https://workersandbox.mturk.com/mturk/externalSubmit")
    expect(form.locator("input[name=assignmentId]")).to_have_value("A1")
    code = page.locator(".js-code").text_content()
    expect(form.locator("input[name=completion_code]")).to_have_value(code)
    expect(form.locator("input[name=outcome]")).to_have_value("completed")


def test_other_validators_get_no_mturk_form(page: Page, live_server, tmp_path):
    seed_round(live_server, tmp_path)
    page.goto(f"{live_server.url}/validate/blind-1?annotator=val-4")
    progress = page.locator(".js-progress")
    for expected in ("Item 1 of 3", "Item 2 of 3", "Item 3 of 3"):
        expect(progress).to_have_text(expected)
        page.get_by_role("button", name="Agree", exact=True).click()
    expect(page.locator(".js-code")).not_to_be_empty()
    expect(page.get_by_role("button", name="Send your work to MTurk")).to_have_count(0)


def test_a_prolific_validator_is_sent_back_right_after_finishing(page: Page, live_server, tmp_path):
    """The done panel follows its Return link after a moment, as the annotator's does, but
    only right after the last judgment: reopening the finished session stays on the page.
    Playwright answers for app.prolific.com (no real network)."""
    seed_round(live_server, tmp_path)
    live_server.app.config["COMPLETION_URL"] = (
        "https://app.prolific.com/submissions/complete?cc={code}"
    )
    asked: list[str] = []

    def answer(route: Route) -> None:
        asked.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>Prolific</title>")

    page.route("https://app.prolific.com/**", answer)
    page.goto(f"{live_server.url}/validate/blind-1?PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1")
    expect(page).to_have_url(re.compile(r"/v/[\w-]+$"))
    validator_page = page.url
    progress = page.locator(".js-progress")
    for expected in ("Item 1 of 3", "Item 2 of 3", "Item 3 of 3"):
        expect(progress).to_have_text(expected)
        page.get_by_role("button", name="Agree", exact=True).click()
    link = page.get_by_role("link", name="Return to the study")
    expect(link).to_be_visible()  # the code and the link are shown before leaving
    code = page.locator(".js-code").text_content()
    target = f"https://app.prolific.com/submissions/complete?cc={code}"
    expect(link).to_have_attribute("href", target)
    page.wait_for_url(target)
    assert asked == [target]

    page.goto(validator_page)
    expect(page.get_by_role("link", name="Return to the study")).to_be_visible()
    page.wait_for_timeout(2500)  # longer than the follow delay after the last judgment
    assert page.url == validator_page
    assert asked == [target]
