"""The console's Downloads menu lists every export once (issue 27, point 11), on both
databases: before, suggestions.jsonl came twice and training, surveys, paragraphs and gold
were missing. The list is the table of exports (app/research/downloads.py: each export in
each of its formats, issue 29 point 4); each link downloads."""

from __future__ import annotations

import re

from app.research.downloads import EXPORTS

MENU = re.compile(r'<ul class="menu__list">(.*?)</ul>', re.S)
LINK = re.compile(r'<a class="menu__link" href="([^"]+)" download>([^<]+)</a>')


def test_the_downloads_menu_lists_every_export_once(app, researcher_client):
    page = researcher_client.get("/research/").get_data(as_text=True)
    links = LINK.findall(MENU.search(page).group(1))
    hrefs = [href for href, _ in links]
    assert len(hrefs) == len(set(hrefs)), hrefs  # each once
    assert all(href.endswith(f"/{name}") for href, name in links)
    exports = {
        f"/research/export/{what}.{fmt}"
        for what, export in EXPORTS.items()
        for fmt in export.formats
    }
    assert set(hrefs) == exports
    # One route serves them all.
    routes = [r.rule for r in app.url_map.iter_rules() if r.rule.startswith("/research/export/")]
    assert routes == ["/research/export/<what>.<fmt>"]
    for name in ("training.csv", "surveys.csv", "paragraphs.csv", "gold.jsonl"):
        assert f"/research/export/{name}" in hrefs, name
    assert hrefs[:2] == ["/research/export/annotations.jsonl", "/research/export/annotations.csv"]
    for href in hrefs:
        response = researcher_client.get(href)
        response.get_data()  # read the streamed body through
        response.close()
        assert response.status_code == 200, href
        assert "attachment" in response.headers["Content-Disposition"], href
