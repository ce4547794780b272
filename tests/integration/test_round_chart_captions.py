"""The validation report's precision chart names each group above its own bars (issue 14
point 10): read from the SVG the page serves, each caption sits just above its group's
first bar and below the previous group's last bar."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tests.support.validation import make_documents, write_jsonl

CAPTIONS = ["By source", "By category", "By document"]


def _seed_judged_round(runner, tmp_path) -> None:
    make_documents()
    items = [
        {"id": "i1", "source": "human", "document_id": "doc-a", "span": {"text": "Łukasz"}},
        {"id": "i2", "source": "gpt-4", "document_id": "doc-b", "span": {"text": "Nobody"}},
        {"id": "i3", "source": "claude", "document_id": "doc-b", "span": {"text": "answered"}},
        {"id": "i4", "source": "human", "document_id": "doc-a", "span": {"text": "harbour"}},
    ]
    for item, labels in zip(
        items, (["new-person"], ["repetition"], [], ["new-person"]), strict=True
    ):
        item["labels"] = labels
    path = write_jsonl(tmp_path / "items.jsonl", items)
    result = runner.invoke(args=["validation", "create-round", "charts", "--items", str(path)])
    assert result.exit_code == 0, result.output
    verdicts = ("agree", "disagree", "partial", "agree")
    judgments = [
        {"item_id": item["id"], "validator": "v1", "verdict": verdict, "reasons": []}
        for item, verdict in zip(items, verdicts, strict=True)
    ]
    for judgment in judgments:
        if judgment["verdict"] != "agree":
            judgment["reasons"] = ["D. Other"]
    path = write_jsonl(tmp_path / "judgments.jsonl", judgments)
    result = runner.invoke(args=["validation", "import-judgments", "charts", str(path)])
    assert result.exit_code == 0, result.output


def _svg(html: str) -> ET.Element:
    found = re.search(r'<svg[^>]*data-chart="chart-precision".*?</svg>', html, re.S)
    assert found, "no precision chart on the page"
    return ET.fromstring(found.group(0))  # noqa: S314 (our own page, not untrusted input)


def test_each_caption_is_above_its_own_bars(researcher_client, runner, tmp_path):
    _seed_judged_round(runner, tmp_path)
    response = researcher_client.get("/research/rounds/charts")
    assert response.status_code == 200
    svg = _svg(response.get_data(as_text=True))
    groups = svg.findall("g[@class='chart__group']")
    captions = [g.find("text[@font-weight='600']").text for g in groups]
    assert captions == CAPTIONS  # no item has a known original annotator: no such group
    previous_bottom = 0.0
    for group, caption in zip(groups, captions, strict=True):
        caption_y = float(group.find("text[@font-weight='600']").get("y"))
        bars = group.findall(".//rect[@class='chart__bar']")
        assert bars, caption
        tops = [float(bar.get("y")) for bar in bars]
        bottom = max(top + float(bar.get("height")) for top, bar in zip(tops, bars, strict=True))
        # The caption's baseline is just above its own first bar...
        assert 0 < min(tops) - caption_y <= 12, (caption, caption_y, min(tops))
        # ...and its text (about 13 px tall above the baseline) clears the previous group.
        assert caption_y - 13 > previous_bottom, (caption, caption_y, previous_bottom)
        previous_bottom = bottom
    sources = [t.text for t in groups[0].findall(".//text[@class='chart__label']")]
    assert sorted(sources) == ["claude", "gpt-4", "human"]
    assert float(svg.get("height")) >= previous_bottom
    description = svg.find("desc").text
    assert description.index("By source") < description.index("By category")


def test_a_round_without_judgments_has_no_chart(researcher_client, runner, tmp_path):
    make_documents()
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [{"id": "i1", "source": "human", "document_id": "doc-a", "span": {"text": "Łukasz"}}],
    )
    assert (
        runner.invoke(args=["validation", "create-round", "empty", "--items", str(path)]).exit_code
        == 0
    )
    html = researcher_client.get("/research/rounds/empty").get_data(as_text=True)
    assert 'data-chart="chart-precision"' not in html
