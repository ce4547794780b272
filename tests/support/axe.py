"""The accessibility audit: axe-core run in the page, its violations as readable lines."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page


def violations(page: Page) -> list[str]:
    """axe-core's violations on the page as it is now: rule, impact, first few nodes."""
    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        nodes = [" ".join(node["target"]) for node in violation["nodes"][:3]]
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} {nodes}")
    return found
