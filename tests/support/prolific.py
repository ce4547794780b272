"""Prolific in the browser tests: Playwright answers for app.prolific.com (no network)."""

from __future__ import annotations

from playwright.sync_api import Page, Route

PROLIFIC = "https://app.prolific.com/submissions/complete?cc="


def stub_prolific(page: Page) -> list[str]:
    """Answer every request to app.prolific.com in the browser; the URLs asked for."""
    asked: list[str] = []

    def answer(route: Route) -> None:
        asked.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>Prolific</title>")

    page.route("https://app.prolific.com/**", answer)
    return asked
