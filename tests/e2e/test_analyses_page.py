"""The researcher's Analyses page in Chromium: reached from the console's navigation,
each analysis asked for by a keyboard-pressed button (a POST that the analysis queue
answers), axe-clean with results and while one is being computed, the page reloading
itself once the result is stored, and laid out at phone, tablet and desktop widths
(screenshots in /tmp)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.axe import violations
from tests.support.research_console import log_in

SCREENSHOTS = "/tmp"


def test_analyses_by_keyboard_and_axe_clean(console, page: Page):
    log_in(page, console.url)
    nav = page.get_by_role("navigation", name="Research console")
    nav.get_by_role("link", name="Analyses").click()
    expect(page.get_by_role("heading", name="Analyses", exact=True)).to_be_visible()
    assert violations(page) == []

    page.get_by_role("button", name="Compute the recall estimate").focus()
    page.keyboard.press("Enter")
    recall = page.get_by_role("region", name="How many errors did nobody find?")
    expect(recall.get_by_role("rowheader", name="Study")).to_be_visible()

    page.get_by_label("Target half-width").fill("10")
    page.get_by_label("Hourly rate (optional)").fill("12")
    page.get_by_label("Hourly rate (optional)").press("Enter")
    plan = page.get_by_role("region", name="How big must the study be?")
    expect(plan.get_by_role("rowheader", name="2", exact=True)).to_be_visible()
    expect(page.get_by_label("Target half-width")).to_have_value("10")
    _at_every_width(page, "plan")

    judge = page.get_by_label("Model (source of suggestions, or an annotator's platform:id)")
    judge.fill("nobody")
    judge.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("No suggestions from source 'nobody'")
    assert violations(page) == []

    _at_every_width(page, "judge")


def test_a_pending_analysis_is_announced_and_shown_once_stored(console, page: Page):
    # No queue answers: the page's request waits; the command then computes the result.
    console.app.config["QUEUE_URL"] = "redis://127.0.0.1:9/0"
    log_in(page, console.url)
    page.goto(f"{console.url}/research/analyses")
    page.get_by_role("button", name="Compute the recall estimate").focus()
    page.keyboard.press("Enter")
    recall = page.get_by_role("region", name="How many errors did nobody find?")
    expect(recall.get_by_text("The recall estimate is being computed")).to_be_visible()
    expect(page.get_by_role("status").first).to_contain_text("being computed")
    expect(page.get_by_text("does not answer")).to_be_visible()
    expect(recall.get_by_role("link", name="refresh the page")).to_be_visible()
    assert violations(page) == []
    _at_every_width(page, "pending")
    page.set_viewport_size({"width": 1280, "height": 900})

    result = console.app.test_cli_runner().invoke(args=["recall-estimate"])
    assert result.exit_code == 0, result.output
    # The page's script sees it stored and reloads: no click.
    expect(recall.get_by_role("rowheader", name="Study")).to_be_visible(timeout=10_000)
    expect(recall.get_by_text("Computed")).to_be_visible()
    assert violations(page) == []
    _at_every_width(page, "done")


def _at_every_width(page: Page, state: str) -> None:
    """No horizontal scroll at phone, tablet and desktop widths; a screenshot of each."""
    for width in (390, 768, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        assert not overflow, f"horizontal scroll at {width}px"
        page.screenshot(path=f"{SCREENSHOTS}/research-analyses-{state}-{width}.png", full_page=True)
