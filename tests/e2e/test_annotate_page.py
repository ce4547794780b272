"""The annotator page's safety and ergonomics: untrusted text stays text, refused
selections explain themselves, keyboard use, coreference cues, touch devices, previews."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.annotate_page import (
    open_task,
    seed_document,
    select_span,
    stored_annotations,
    submit_task,
    wait_for_value,
)

XSS_IMG = "<img src=x onerror=alert(1)>"
XSS_SCRIPT = "<script>alert(1)</script>"


def test_untrusted_text_is_shown_literally(page: Page, live_server):
    """Markup in document text, title and comments is displayed as text; nothing runs."""
    paragraphs = [f"Hello {XSS_IMG} world.", f"Second {XSS_SCRIPT} paragraph & more."]
    seed_document(live_server, "xss", paragraphs, title=f"Title {XSS_SCRIPT}")
    open_task(page, live_server, "xss")

    expect(page.get_by_role("heading", level=1)).to_have_text(f"Title {XSS_SCRIPT}")
    current = page.get_by_role("region", name="Current Paragraph")
    expect(current.locator('[data-paragraph="0"]')).to_have_text(paragraphs[0])
    assert page.locator("main img").count() == 0

    start = paragraphs[0].index("<img")
    select_span(page, 0, paragraphs[0], start, start + len(XSS_IMG))
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(XSS_IMG)
    page.get_by_role("button", name="Ungrammatical", exact=True).click()
    page.get_by_role("textbox", name="Other comments / feedback (optional)").fill(XSS_SCRIPT)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")

    row = page.locator(".js-annotation-row")
    expect(row.locator("strong")).to_have_text(XSS_IMG)
    expect(row.locator(".previous__comment")).to_have_text(XSS_SCRIPT)
    expect(current.locator("mark.hl")).to_have_text(XSS_IMG)
    assert page.locator("main img, main script").count() == 0
    [stored] = stored_annotations(live_server)
    assert (stored.span_text, stored.comment) == (XSS_IMG, XSS_SCRIPT)

    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(current.locator('[data-paragraph="1"]')).to_have_text(paragraphs[1])
    page.reload()
    expect(page.locator(".js-annotation-row .previous__comment")).to_have_text(XSS_SCRIPT)
    assert page.locator("main img, main script").count() == 0


def test_selections_outside_the_allowed_region_are_refused_with_a_hint(page: Page, live_server):
    """Step 1 takes only the Current Paragraph; one selection may not span two paragraphs."""
    paragraphs = ["First paragraph text here.", "Second paragraph text here."]
    seed_document(live_server, "hints", paragraphs)
    open_task(page, live_server, "hints")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator('[data-paragraph="1"]')).to_be_visible()
    hint = page.locator(".js-hint")
    span_box = page.get_by_role("textbox", name="Selected span")

    select_span(page, 0, paragraphs[0], 0, 5)
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("Select the error in the Current Paragraph")
    expect(span_box).to_have_value("")

    # A drag from the Context into the Current Paragraph.
    first = page.locator('[data-paragraph="0"]').bounding_box()
    second = page.locator('[data-paragraph="1"]').bounding_box()
    assert first and second
    page.mouse.move(first["x"] + 20, first["y"] + 8)
    page.mouse.down()
    page.mouse.move(second["x"] + 60, second["y"] + 10, steps=5)
    page.mouse.up()
    expect(hint).to_contain_text("Select text within one paragraph.")
    expect(span_box).to_have_value("")

    # A whitespace-only selection does nothing; a good one clears the hint.
    select_span(page, 1, paragraphs[1], 7, 16)
    expect(span_box).to_have_value("paragraph")
    expect(hint).to_be_hidden()


def test_every_step_but_the_selection_works_from_the_keyboard(page: Page, live_server):
    """Tab to a category, Space to choose it, type a comment, Enter to add."""
    paragraphs = ["Nobody knew where Quentin came from."]
    seed_document(live_server, "keys", paragraphs)
    open_task(page, live_server, "keys")
    select_span(page, 0, paragraphs[0], 18, 25)

    first_category = page.get_by_role("button", name="New person not introduced", exact=True)
    page.get_by_role("textbox", name="Selected span").focus()
    page.keyboard.press("Tab")
    expect(first_category).to_be_focused()
    description = first_category.get_attribute("aria-describedby")
    expect(page.locator(f"#{description}")).to_be_visible()  # the description shows on focus
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    expect(
        page.get_by_role("button", name="Missing information about an object or event")
    ).to_have_attribute("aria-pressed", "true")
    # A shortcut typed into the comment is text, not a category change.
    comment = page.get_by_role("textbox", name="Other comments / feedback (optional)")
    comment.focus()
    page.keyboard.type("unsure 3")
    expect(comment).to_have_value("unsure 3")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Saved")
    [stored] = stored_annotations(live_server)
    assert (stored.span_text, stored.category, stored.comment) == (
        "Quentin",
        "missing-info",
        "unsure 3",
    )
    # Remove with the keyboard; the confirmation takes focus; Escape backs out of it.
    page.get_by_role("button", name="Remove").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Yes, remove")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_role("button", name="Remove")).to_be_focused()
    expect(page.locator(".js-annotation-row")).to_have_count(1)
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Yes, remove")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".js-annotation-row")).to_have_count(0)
    expect(page.get_by_role("status")).to_have_text("Saved")


def test_hovering_an_entity_highlights_its_other_mentions(page: Page, live_server):
    """Coreference cues: whole-word, case-sensitive mentions across Context and Current."""
    paragraphs = ["Ada met Bob. Adam is not Ada.", "Later Ada left, and ada stayed."]
    seed_document(live_server, "coref", paragraphs, entities=["Ada", "Bob"])
    open_task(page, live_server, "coref")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator('[data-paragraph="1"]')).to_be_visible()
    count = "() => CSS.highlights.get('coref')?.size ?? 0"
    texts = "() => [...(CSS.highlights.get('coref') ?? [])].map((r) => r.toString())"

    box = page.evaluate(
        """() => {
          const el = document.querySelector('[data-paragraph="1"]');
          const node = el.firstChild; const at = el.textContent.indexOf('Ada');
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + 3);
          const r = range.getBoundingClientRect();
          return {x: r.left + r.width / 2, y: r.top + r.height / 2};
        }"""
    )
    page.mouse.move(box["x"], box["y"])
    wait_for_value(page, count, 3)
    assert page.evaluate(texts) == ["Ada", "Ada", "Ada"]
    # Nothing was inserted into the paragraphs.
    assert page.locator('[data-paragraph="0"]').evaluate("el => el.childNodes.length") == 1
    page.mouse.move(5, 5)
    wait_for_value(page, count, 0)


def test_touch_only_devices_are_told_to_use_a_desktop_browser(browser, live_server):
    """A phone (coarse pointer only) gets a clear message."""
    seed_document(live_server, "touch", ["Some text."])
    context = browser.new_context(
        has_touch=True, is_mobile=True, viewport={"width": 390, "height": 800}
    )
    try:
        page = context.new_page()
        open_task(page, live_server, "touch")
        expect(
            page.get_by_text("This task needs a desktop or laptop browser with a mouse")
        ).to_be_visible()
    finally:
        context.close()


def test_desktop_browsers_get_no_touch_warning(page: Page, live_server):
    """The warning stays hidden with a mouse."""
    seed_document(live_server, "desk", ["Some text."])
    open_task(page, live_server, "desk")
    expect(
        page.get_by_text("This task needs a desktop or laptop browser with a mouse")
    ).to_be_hidden()


def test_mturk_preview_is_read_only(page: Page, live_server):
    """An MTurk HIT preview shows the first paragraph, a banner, and nothing to click."""
    seed_document(live_server, "preview", ["Only the first paragraph.", "Hidden until accepted."])
    page.goto(f"{live_server.url}/annotate/preview?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    current = page.get_by_role("region", name="Current Paragraph")
    expect(current.locator('[data-paragraph="0"]')).to_have_text("Only the first paragraph.")
    expect(page.get_by_text("Preview: you can read the task")).to_be_visible()
    expect(page.get_by_role("button", name="No more errors. Go to next paragraph")).to_be_disabled()
    expect(page.get_by_role("button", name="Repetition", exact=True)).to_be_disabled()
    select_span(page, 0, "Only the first paragraph.", 0, 4)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("")
    assert "Hidden until accepted." not in page.content()


def test_instructions_panel_collapses_and_stays_collapsed(page: Page, live_server):
    """The Instructions button hides and shows the taxonomy's instructions; remembered."""
    seed_document(live_server, "help", ["Some text."])
    open_task(page, live_server, "help")
    toggle = page.get_by_role("button", name="Instructions")
    panel = page.get_by_role("region", name="Instructions")
    expect(panel).to_contain_text("one paragraph at a time")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(panel).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.reload()
    expect(
        page.get_by_role("region", name="Current Paragraph").locator("[data-paragraph]")
    ).to_be_visible()
    expect(panel).to_be_hidden()
    toggle.click()
    expect(panel).to_be_visible()


def test_an_unfinished_annotation_is_not_dropped_by_moving_on(page: Page, live_server):
    """With a span and a category chosen, Next asks to Add or Clear first."""
    paragraphs = ["Quentin arrived.", "He left."]
    seed_document(live_server, "unfinished", paragraphs)
    open_task(page, live_server, "unfinished")
    select_span(page, 0, paragraphs[0], 0, 7)
    page.keyboard.press("1")
    next_button = page.get_by_role("button", name="No more errors. Go to next paragraph")
    next_button.click()
    expect(page.locator(".js-hint")).to_contain_text("Finish the annotation you started")
    expect(page.locator('.js-current-body [data-paragraph="0"]')).to_be_visible()
    page.get_by_role("button", name="Clear", exact=True).click()
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("")
    next_button.click()
    expect(page.locator('.js-current-body [data-paragraph="1"]')).to_be_visible()


def submit_single_paragraph_task(page: Page, live_server, query: str) -> str:
    """Open a one-paragraph task with platform parameters, Submit; the completion code."""
    seed_document(live_server, "platform", ["Just one paragraph."])
    page.goto(f"{live_server.url}/annotate/platform?{query}")
    submit_task(page)
    code = page.locator(".js-completion-code")
    expect(code).not_to_be_empty()
    return code.text_content() or ""


def test_prolific_workers_get_a_link_back_with_their_code(page: Page, live_server):
    """After Submit, a Prolific worker sees the code and the study's completion link (the
    default taxonomy's first-wave completion_url sends the session's own code), and is
    taken there. Playwright answers for app.prolific.com: no real network."""
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="Prolific"),
    )
    code = submit_single_paragraph_task(
        page, live_server, "PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"
    )
    link = page.get_by_role("link", name="Return to the study")
    expect(link).to_have_attribute(
        "href", f"https://app.prolific.com/submissions/complete?cc={code}"
    )
    page.wait_for_url(f"https://app.prolific.com/submissions/complete?cc={code}")


def test_mturk_workers_get_the_externalsubmit_form(page: Page, live_server):
    """After Submit, an MTurk worker gets a button posting the assignment to MTurk."""
    submit_single_paragraph_task(
        page,
        live_server,
        "workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com",
    )
    button = page.get_by_role("button", name="Send your work to MTurk")
    form = page.locator("form", has=button)
    expect(form).to_have_attribute("action", "https://workersandbox.mturk.com/mturk/externalSubmit")
    expect(form.locator("input[name=assignmentId]")).to_have_value("A1")
    expect(form.locator("input[name=outcome]")).to_have_value("completed")


def test_the_page_preloads_exactly_the_modules_it_runs(page: Page, live_server):
    """The modulepreload links (app/core/static_urls.module_preloads, read from the modules'
    imports) name every ES module the page loads, and none it does not: the browser
    fetches the whole graph at once."""
    seed_document(live_server, "preload", ["One paragraph.", "Two."])
    open_task(page, live_server, "preload")
    preloaded = page.evaluate(
        "[...document.querySelectorAll('link[rel=modulepreload]')].map((link) => link.href)"
    )
    loaded = page.evaluate(
        "performance.getEntriesByType('resource').map((entry) => entry.name)"
        ".filter((name) => new URL(name).pathname.endsWith('.mjs'))"
    )
    assert len(preloaded) == len(set(preloaded)) > 20
    assert sorted(set(loaded)) == sorted(preloaded)
