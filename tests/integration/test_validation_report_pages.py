"""The researcher's round pages: list, HTML report with inline SVG, JSON and CSV."""

from __future__ import annotations

import json
import re

import pytest

from app.validation.report import compute_report
from app.validation.rounds import find_round


@pytest.fixture
def judged_round(app, runner, booookscore_sample):
    path = str(booookscore_sample / "validation-judgments.json")
    assert runner.invoke(args=["validation", "create-round", "bs", "--items", path]).exit_code == 0
    assert runner.invoke(args=["validation", "import-judgments", "bs", path]).exit_code == 0
    return "bs"


def test_round_pages_need_a_researcher(client, judged_round):
    assert client.get("/research/rounds").status_code in (302, 401)
    assert client.get("/research/rounds/bs").status_code in (302, 401)
    response = client.get("/research/rounds/bs/report.json")
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "unauthorized"


def test_report_json_is_the_cli_report(researcher_client, runner, judged_round):
    response = researcher_client.get("/research/rounds/bs/report.json")
    assert response.status_code == 200
    cli = json.loads(runner.invoke(args=["validation", "report", "bs", "--format", "json"]).stdout)
    assert response.get_json() == cli
    assert researcher_client.get("/research/rounds/nope/report.json").status_code == 404


def test_report_page_shows_the_numbers_and_charts(researcher_client, judged_round):
    response = researcher_client.get("/research/rounds/bs")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    report = compute_report(find_round("bs"))
    assert f"{100 * report['precision']:.1f}%" in html
    for source, stats in report["by_source"].items():
        assert source in html
        low, high = stats["ci95"]
        assert f"{100 * low:.1f}–{100 * high:.1f}%" in html
    assert html.count('class="chart__group"') >= 3  # one drawing, a group per table
    assert not re.search(r"\sstyle\s*=", html)  # the CSP forbids style attributes
    assert researcher_client.get("/research/rounds/nope").status_code == 404


def test_rounds_list_and_csv(researcher_client, judged_round):
    html = researcher_client.get("/research/rounds").get_data(as_text=True)
    assert "/research/rounds/bs" in html
    assert "/validate/bs" in html
    response = researcher_client.get("/research/rounds/bs/report.csv")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    assert response.get_data(as_text=True).startswith("group,name,judgments")
