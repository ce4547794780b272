"""Researcher console: login (auth.py), dashboard and document pages (routes.py over
dashboard.py, document_table.py, study_figures.py, charts.py, agreement_figures.py, pacing.py,
mqm.py), the session viewer, the
validation rounds' pages (round_pages.py), the table of exports and its one download route
(downloads.py), the study report (study_report.py), the analyses of docs/analyses.md
(analyses.py, their page analysis_pages.py) and the research commands (cli.py)."""

from flask import Blueprint

bp = Blueprint("research", __name__)

from app.research import analysis_pages, auth, downloads, round_pages, routes  # noqa: E402,F401
