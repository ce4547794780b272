"""What a first real study tripped over on the worker page (issue 14, points 1-8): layout
from a 360 px phone to 1280 px, refused Adds, drafts, layered highlights, keyboard
selection, Submit's confirmation, "Show in text", and a page that stays where it is put.
Screenshots go to SCREENSHOTS (a temporary folder unless set) for people to look at."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.models import AnnotationSession
from tests.support.annotate_page import (
    open_task,
    resize,
    seed_document,
    select_span,
    stored_annotations,
    wait_until,
)
from tests.support.annotated_task import (
    COMMENT,
    OVERFLOW,
    SCREENSHOTS,
    add,
    annotated_task,
    next_paragraph,
)
from tests.support.research_console import log_in

VIEWPORTS = [(360, 740), (390, 844), (768, 1024), (1280, 800)]


def test_no_horizontal_scroll_and_the_table_stacks_as_cards(page: Page, live_server):
    """Point 1: from 360 px up nothing scrolls sideways; narrow tables are cards whose
    span and comment read as lines, not one character per line."""
    annotated_task(page, live_server)
    rows = page.locator(".js-annotation-row")
    expect(rows).to_have_count(4)
    for width, height in VIEWPORTS:
        resize(page, width, height)
        scroll_width, client_width = page.evaluate(OVERFLOW)
        assert scroll_width <= client_width, (width, scroll_width)
        page.screenshot(path=str(SCREENSHOTS / f"worker-{width}.png"), full_page=True)
        row = rows.filter(has_text=COMMENT)
        row.scroll_into_view_if_needed()
        span = row.locator(".previous__span").bounding_box()
        comment = row.locator(".previous__comment").bounding_box()
        assert span and comment
        assert span["width"] > 120 and comment["width"] > 120, (width, span, comment)
        headers_shown = page.locator(".previous__table thead").bounding_box()
        if width < 1280:  # cards: the headers are for assistive technology only
            assert headers_shown is None or headers_shown["height"] <= 1
            expect(row.locator(".previous__paragraph")).to_have_text("1")
        else:
            assert headers_shown and headers_shown["height"] > 20
        page.locator("section.previous").screenshot(
            path=str(SCREENSHOTS / f"worker-table-{width}.png")
        )


def test_the_research_dashboard_does_not_scroll_sideways(console, page: Page):
    log_in(page, console.url)
    for width, height in VIEWPORTS:
        resize(page, width, height)
        scroll_width, client_width = page.evaluate(OVERFLOW)
        assert scroll_width <= client_width, (width, scroll_width)
        page.screenshot(path=str(SCREENSHOTS / f"dashboard-{width}.png"), full_page=True)


def test_a_refused_add_keeps_the_form_and_says_why_next_to_add(page: Page, live_server):
    """Point 2: the server's span rules run before sending, with its messages; a refusal
    the browser cannot foresee keeps the form too."""
    paragraphs = ["Ada saw the sea. Ada saw the sea again."]
    seed_document(live_server, "same", paragraphs)
    open_task(page, live_server, "same")
    text = paragraphs[0]
    span_box = page.get_by_role("textbox", name="Selected span")
    paired_box = page.get_by_role("textbox", name="Paired span")
    comment = page.get_by_role("textbox", name="Other comments / feedback (optional)")
    error = page.locator(".step--add").get_by_role("alert")

    select_span(page, 0, text, 0, 15)
    page.get_by_role("button", name="Repetition", exact=True).click()
    select_span(page, 0, text, 0, 15)  # the paired span: the very same text
    comment.fill("same twice")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(error).to_have_text(
        "The second span is the same text as the first; select the other occurrence."
    )
    expect(span_box).to_have_value("Ada saw the sea")
    expect(paired_box).to_have_value("Ada saw the sea")
    expect(comment).to_have_value("same twice")
    expect(page.locator(".js-annotation-row")).to_have_count(0)
    page.wait_for_timeout(300)
    assert stored_annotations(live_server) == []

    # A refusal only the server can make (the text sent no longer matches): form kept.
    def corrupt(route):
        body = route.request.post_data_json
        body["span"]["text"] = "not the paragraph text"
        route.continue_(post_data=json.dumps(body))

    page.route("**/api/sessions/*/annotations", corrupt)
    page.get_by_role("textbox", name="Paired span").focus()
    second = text.index("Ada saw the sea again")
    select_span(page, 0, text, second, second + 15)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(error).to_contain_text("The selected text does not match the paragraph")
    expect(span_box).to_have_value("Ada saw the sea")
    expect(page.get_by_role("button", name="Repetition", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(comment).to_have_value("same twice")
    assert stored_annotations(live_server) == []


def test_the_same_annotation_twice_is_refused_next_to_add(page: Page, live_server):
    """Issue 26 point 4: an Add of the same error type on the same span as a live
    annotation is refused next to Add (the server would answer 422 duplicate_annotation);
    a refusal by the server itself says the same, in the page's words."""
    paragraphs = ["Ada saw the sea. Ada saw the sea again."]
    seed_document(live_server, "twice", paragraphs)
    open_task(page, live_server, "twice")
    text = paragraphs[0]
    error = page.locator(".step--add").get_by_role("alert")
    add_button = page.get_by_role("button", name="Add", exact=True)
    said = (
        "You have already added this annotation (the same error type on the same text). "
        "To change it, remove it under Previous annotations and add it again."
    )
    for comment in ("first", "second"):
        select_span(page, 0, text, 0, 3)
        page.get_by_role("button", name="Ungrammatical", exact=True).click()
        page.get_by_role("textbox", name="Other comments / feedback (optional)").fill(comment)
        add_button.click()
    expect(error).to_have_text(said)
    expect(page.locator(".js-annotation-row")).to_have_count(1)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("Ada")
    # Another error type on the same span is another annotation.
    page.get_by_role("button", name="New person not introduced", exact=True).click()
    add_button.click()
    expect(page.locator(".js-annotation-row")).to_have_count(2)
    expect(page.locator(".step--add")).not_to_contain_text(said)
    wait_until(
        page,
        lambda: (
            sorted(a.category for a in stored_annotations(live_server))
            == ["new-person", "ungrammatical"]
        ),
    )

    # The server's refusal (another tab added it meanwhile) reads the same.
    def refuse(route):
        error = {"code": "duplicate_annotation", "message": "English", "details": {}}
        route.fulfill(status=422, json={"error": error})

    page.route("**/api/sessions/*/annotations", refuse)
    select_span(page, 0, text, 4, 7)
    page.get_by_role("button", name="Ungrammatical", exact=True).click()
    add_button.click()
    expect(error).to_have_text(said)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("saw")


def test_an_unfinished_annotation_survives_a_reload(page: Page, live_server):
    """Point 3: span, category, paired span and comment come back after a reload; Add
    clears the draft."""
    paragraphs = ["Ada met Bob.", "Later Bob met Ada again."]
    seed_document(live_server, "draft", paragraphs)
    open_task(page, live_server, "draft")
    next_paragraph(page, 1)
    select_span(page, 1, paragraphs[1], 6, 17)
    page.keyboard.press("4")
    select_span(page, 0, paragraphs[0], 0, 11)
    page.get_by_role("textbox", name="Other comments / feedback (optional)").fill("again")
    page.reload()
    expect(page.locator(".js-current-body [data-paragraph='1']")).to_be_visible()
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("Bob met Ada")
    expect(page.get_by_role("textbox", name="Paired span")).to_have_value("Ada met Bob")
    expect(page.get_by_role("button", name="Repetition", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.get_by_role("textbox", name="Other comments / feedback (optional)")).to_have_value(
        "again"
    )
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    [row] = stored_annotations(live_server)
    assert (row.span_text, row.paired_text, row.comment) == ("Bob met Ada", "Ada met Bob", "again")
    page.reload()
    expect(page.locator(".js-annotation-row")).to_have_count(1)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("")


def test_each_layer_of_overlapping_highlights_shows_its_category_colour(page: Page, live_server):
    """Point 4: the outer span is a stripe in its own category colour (not grey), every
    span shows its boundaries, and the pending selection uses a fill no category uses."""
    paragraphs = ["The old lighthouse keeper climbed the stairs."]
    seed_document(live_server, "layers", paragraphs)
    open_task(page, live_server, "layers")
    text = paragraphs[0]
    add(page, 0, text, 0, 35, "3")  # outer: Abrupt scene transition
    add(page, 0, text, 4, 26, "6")  # inner: Ungrammatical
    colours = page.evaluate(
        "() => Object.fromEntries(JSON.parse(document.querySelector('[data-module]')"
        ".dataset.bootstrap).taxonomy.categories.map((c) => [c.key, c.color]))"
    )
    inner = page.locator('[data-paragraph="0"] mark.hl--overlap')
    expect(inner).to_have_text("old lighthouse keeper")
    style = inner.evaluate(
        "el => [getComputedStyle(el).backgroundColor, getComputedStyle(el).boxShadow]"
    )
    assert style[0] == rgb(colours["ungrammatical"])
    assert rgb(colours["abrupt-transition"]) in style[1]  # the outer layer's own colour
    for mark in page.locator('[data-paragraph="0"] mark.hl').all():
        classes = mark.get_attribute("class") or ""
        shadow = mark.evaluate("el => getComputedStyle(el).boxShadow")
        if "hl--start" in classes or "hl--end" in classes:
            assert "inset" in shadow  # a boundary bar
    select_span(page, 0, text, 36, 44)
    pending = page.evaluate(
        "() => { const s = getComputedStyle(document.querySelector('.annotator'));"
        " return s.getPropertyValue('--pending-fill').trim(); }"
    )
    assert pending.lower() not in {c.lower() for c in colours.values()}
    assert page.evaluate("() => CSS.highlights.get('pending-span').size") == 1
    page.locator('[data-paragraph="0"]').screenshot(path=str(SCREENSHOTS / "layers.png"))


def rgb(hex_color: str) -> str:
    """#rrggbb as the browser's computed rgb()."""
    digits = hex_color.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(digits[i : i + 2], 16) for i in (0, 2, 4)))


def test_a_span_can_be_selected_and_added_with_the_keyboard_only(page: Page, live_server):
    """Point 5: Tab reaches the Current Paragraph (step 1) before the steps; arrows move by
    word, Shift extends, Enter takes; offsets are code points (an emoji counts 1)."""
    paragraphs = ["Zoë met 🚢 Łukasz at the harbour.", "He left 🚢 again, and Zoë stayed."]
    seed_document(live_server, "keys-only", paragraphs)
    open_task(page, live_server, "keys-only")
    current = page.locator(".js-current-body")
    comment = page.get_by_role("textbox", name="Other comments / feedback (optional)", exact=True)
    expect(comment).to_be_visible()  # the step number is not part of its name
    order = page.evaluate(
        """() => [...document.querySelectorAll('.annotator [tabindex="0"], .annotator button')]
             .filter((el) => !el.disabled && el.offsetParent)
             .map((el) => el.className)"""
    )
    first_category = next(i for i, c in enumerate(order) if "js-category" in c)
    assert any("js-current-body" in c for c in order[:first_category])

    page.get_by_role("button", name="Instructions").focus()
    for _ in range(5):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('js-current-body')"):
            break
    expect(current).to_be_focused()
    for key in ["ArrowRight"] * 3 + ["Shift+ArrowRight"] * 2 + ["Enter"]:
        page.keyboard.press(key)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("Łukasz at the")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Saved")
    [row] = stored_annotations(live_server)
    start = paragraphs[0].index("Łukasz")
    assert (row.span_start, row.span_end, row.span_text) == (start, start + 13, "Łukasz at the")
    assert paragraphs[0][row.span_start : row.span_end] == row.span_text

    # A paired span in the Context: Up goes to the paragraph before.
    next_paragraph(page, 1)
    current.focus()
    for key in ["ArrowRight"] * 2 + ["Shift+ArrowRight", "Enter", "4", "ArrowUp"]:
        page.keyboard.press(key)
    for key in ["ArrowRight", "ArrowRight", "Shift+ArrowRight", "Enter"]:
        page.keyboard.press(key)
    expect(page.get_by_role("textbox", name="Paired span")).to_have_value("🚢 Łukasz")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Saved")
    paired = stored_annotations(live_server)[-1]
    emoji = paragraphs[1].index("🚢")
    assert (paired.span_start, paired.span_end, paired.span_text) == (emoji, emoji + 7, "🚢 again")
    assert (paired.paired_start, paired.paired_end) == (8, 16)


def test_submit_asks_in_the_page_first(page: Page, live_server):
    """Point 6: Submit asks (it cannot be undone); Cancel leaves the task open."""
    seed_document(live_server, "confirm", ["Just one paragraph."])
    open_task(page, live_server, "confirm")
    page.get_by_role("button", name="Submit", exact=True).click()
    question = page.get_by_role("group", name="Submit your annotations?")
    expect(question).to_contain_text("cannot be undone")
    expect(page.get_by_role("button", name="Yes, submit")).to_be_focused()
    page.get_by_role("button", name="Cancel").click()
    expect(question).to_be_hidden()
    with live_server.app.app_context():
        assert db.session.scalars(select(AnnotationSession.status)).one() == "active"
    page.get_by_role("button", name="Submit", exact=True).click()
    page.get_by_role("button", name="Yes, submit").click()
    expect(page.locator(".js-completion-code")).not_to_be_empty()
    with live_server.app.app_context():
        assert db.session.scalars(select(AnnotationSession.status)).one() == "submitted"


def test_layout_at_1280_and_show_in_text(page: Page, live_server):
    """Point 7: the navigation buttons share one row, the instructions are not a scroll
    area, and "Show in text" brings a span scrolled out of the Context into view."""
    sentence = "The keeper climbed the stairs of the lighthouse every night. "
    paragraphs = [sentence * 4 + f"Part {i} ends." for i in range(6)]
    seed_document(live_server, "long", paragraphs)
    page.set_viewport_size({"width": 1280, "height": 800})
    open_task(page, live_server, "long")
    add(page, 0, paragraphs[0], 4, 10, "1")
    for paragraph in range(1, 6):
        next_paragraph(page, paragraph)
    tops = [
        page.get_by_role("button", name=name, exact=True).bounding_box()["y"]
        for name in ("Previous paragraph", "No more errors. Go to next paragraph", "Submit")
    ]
    assert max(tops) - min(tops) < 2, tops
    instructions = page.get_by_role("region", name="Instructions")
    assert instructions.evaluate("el => el.scrollHeight <= el.clientHeight + 1")
    # The sticky steps never slide over the table below them.
    table = page.locator("section.previous")
    table.evaluate("el => window.scrollTo(0, el.getBoundingClientRect().top + scrollY - 100)")
    steps, table_box = page.locator("form.steps").bounding_box(), table.bounding_box()
    assert steps and table_box and steps["y"] + steps["height"] <= table_box["y"]
    page.screenshot(path=str(SCREENSHOTS / "layout-1280.png"))

    mark = page.locator('[data-paragraph="0"] mark.hl')
    context = page.locator(".js-context-body")
    assert not in_box(mark, context)  # the Context shows its end
    page.get_by_role("button", name="Show in text").click()
    wait_until(page, lambda: in_box(mark, context))
    box = mark.bounding_box()
    assert box and 0 <= box["y"] <= 800
    expect(mark).to_have_class("hl hl-annotation hl--start hl--end is-shown")


def in_box(mark, container) -> bool:
    """Whether the mark lies within the container's visible box."""
    inner, outer = mark.bounding_box(), container.bounding_box()
    return bool(inner and outer) and outer["y"] <= inner["y"] <= outer["y"] + outer["height"]


@pytest.mark.parametrize("width", [1280, 768])
def test_the_page_stays_put_after_remove_and_next(page: Page, live_server, width):
    """Point 8: the next paragraph arriving just after the worker scrolled (to the table,
    say) used to move the page by the height the text gained above (scroll anchoring), so
    a drag started then selected other text; scrollY now stays where the worker put it."""
    sentence = "The keeper climbed the stairs of the lighthouse and counted the ships. "
    paragraphs = [sentence + f"Part {i} ends." for i in range(4)] + [sentence * 9 + "The end."]
    seed_document(live_server, "steady", paragraphs)
    page.set_viewport_size({"width": width, "height": 800})
    open_task(page, live_server, "steady")
    for paragraph in range(3):
        text = paragraphs[paragraph]
        for word in ("keeper", "counted", "ships"):
            start = text.index(word)
            add(page, paragraph, text, start, start + len(word), "1")
        next_paragraph(page, paragraph + 1)
    rows = page.locator(".js-annotation-row")
    rows.nth(2).get_by_role("button", name="Remove").click()
    page.get_by_role("button", name="Yes, remove").click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    # The next paragraph takes a while to come (a slow network), as in the field.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 300, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    page.mouse.move(width / 2, 400)
    table_top = page.locator("section.previous").evaluate("el => el.getBoundingClientRect().top")
    page.mouse.wheel(0, table_top - 40)  # the table at the top of the window
    page.wait_for_timeout(60)
    settled = page.evaluate("scrollY")
    samples = []
    for _ in range(30):
        samples.append(page.evaluate("scrollY"))
        page.wait_for_timeout(20)
    expect(page.locator('.js-current-body [data-paragraph="4"]')).to_be_visible()
    page.wait_for_timeout(100)
    samples.append(page.evaluate("scrollY"))
    assert settled > 0 and set(samples) == {settled}, (settled, samples)


# Runs in the page: the browser's copy of the span rules on each case.
RULES_JS = """
async (cases) => {
  const { checkAnnotation } = await import('/static/js/annotator/rules.mjs');
  return cases.map((c) => checkAnnotation({
    ...c, text: (id) => c.texts[String(id)],
    maxCommentLength: c.maxCommentLength,
  })?.message ?? null);
}
"""


def test_the_browser_applies_the_servers_span_rules_with_its_messages(js_harness):
    """Point 2: static/js/annotator/rules.mjs answers as app/rules/spans.py does, word for word."""
    from app.rules.spans import Span, SpanError, check_annotation

    class Category:
        def __init__(self, key: str, name: str, kind: str) -> None:
            self.key, self.name, self.type = key, name, kind

        @property
        def is_paired(self) -> bool:
            return self.type == "paired"

    texts = {0: "Zoë met 🚢 Łukasz.\nHe said 'hi' \"twice\".", 1: "   Only 🚢 here."}
    single, paired = (
        Category("new-person", "New person", "singleton"),
        Category("rep", "Rep", "paired"),
    )
    span = Span(0, 8, 16, "🚢 Łukasz")
    cases = [
        dict(category=single, span=span),
        dict(category=None, key="nope", span=span),
        dict(category=single, span=Span(0, 17, 40, texts[0][17:40])),
        dict(category=single, span=Span(0, 18, 21, "He ")),
        dict(category=single, span=Span(0, 17, 30, "not the text")),
        dict(category=single, span=Span(0, 17, 18, "\n")),
        dict(category=single, span=Span(2, 0, 1, "x"), furthest=2),
        dict(category=single, span=Span(1, 0, 2, "  "), furthest=0),
        dict(category=single, span=Span(0, 5, 5, "")),
        dict(category=paired, span=span),
        dict(category=single, span=span, paired=Span(0, 0, 3, "Zoë")),
        dict(category=paired, span=Span(0, 0, 3, "Zoë"), paired=Span(1, 3, 7, "Only")),
        dict(category=paired, span=span, paired=span),
        dict(category=paired, span=Span(1, 3, 9, "Only 🚢"), paired=span),
        dict(category=single, span=span, comment="🚢" * 11),
        dict(category=single, span=span, comment="🚢" * 10),
        dict(category=single, span=span, comment="  ", required=True),
    ]
    expected, sent = [], []
    for case in cases:
        category = case["category"]
        arguments = dict(
            category=category,
            known_categories=["new-person", "rep"],
            category_key=category.key if category else case["key"],
            span=case["span"],
            paired_span=case.get("paired"),
            comment=case.get("comment"),
            comment_required=case.get("required", False),
            comment_label="Your question",
            max_comment_length=10,
            texts=texts,
            furthest=case.get("furthest", 1),
        )
        try:
            check_annotation(**arguments)
            expected.append(None)
        except SpanError as error:
            expected.append(error.message)
        sent.append(
            {
                "category": vars(category) if category else None,
                "categoryKey": arguments["category_key"],
                "knownCategories": arguments["known_categories"],
                "span": arguments["span"].to_dict(),
                "paired": case["paired"].to_dict() if case.get("paired") else None,
                "comment": arguments["comment"],
                "commentRequired": arguments["comment_required"],
                "commentLabel": arguments["comment_label"],
                "maxCommentLength": 10,
                "texts": {str(k): v for k, v in texts.items()},
                "furthest": arguments["furthest"],
            }
        )
    assert len({message for message in expected}) > 12  # the cases reach most rules
    page, _ = js_harness
    assert page.evaluate(RULES_JS, sent) == expected
