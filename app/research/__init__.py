"""Researcher console: login (auth.py), dashboard and document pages (routes.py over
dashboard.py, document_table.py, study_figures.py, charts.py, agreement_figures.py, pacing.py,
mqm.py), the session viewer, the
validation rounds' pages (round_pages.py), the table of exports and its one download route
(downloads.py), the study report (study_report.py), the analyses of docs/analyses.md
(analyses.py, their page analysis_pages.py), the studies' pages (study_pages.py: the list,
a study's overview, sharing, copying) and the research commands (cli.py)."""

from app.core.console_urls import ConsoleBlueprint, take_slug

# Registered at /research (the default study) and at /research/studies/<slug> as
# `study_research` (app.core.console_urls); the role check is in auth.py.
bp = ConsoleBlueprint("research", __name__)
bp.url_value_preprocessor(take_slug)

from app.research import (  # noqa: E402,F401
    analysis_pages,
    auth,
    downloads,
    round_pages,
    routes,
    study_pages,
)
