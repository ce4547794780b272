"""The console's addresses per study (docs/studies.md, "Console addresses").

The console's blueprints (`research`, `adjudication`) are ConsoleBlueprints, registered
twice by the factory: at `/research` for the default study (today's addresses), and at
`/research/studies/<slug>` as `study_research` and `study_adjudication` for any study.
The second registration renames the dashboard's `/` to `/dashboard` (the study's
overview has `/research/studies/<slug>/`) and leaves out the login and logout, which
belong to no study. Its `<slug>` is taken out of the view's arguments before the view
runs (`take_slug`) and kept for the request (`console_slug`); who may see the study is
decided by app.studies.access.

`console_url` builds a console address for the study of the page being served: on a
per-study page, `research.X` and `adjudication.X` become the same page of the same study.
It is the templates' `url_for` (so that every link a console page draws stays inside its
study) and what the console's redirects call. A leaf of core: both console blueprints
use it, neither imports the other.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, g, has_request_context, url_for
from flask.sansio.blueprints import BlueprintSetupState

STUDY_PREFIX = "/research/studies/<slug>"
# The default study's blueprint name -> the per-study registration's name.
STUDY_BLUEPRINTS = {"research": "study_research", "adjudication": "study_adjudication"}
# Endpoints of no study: the login and logout (not registered per study).
UNSCOPED = frozenset({"research.login", "research.logout"})
# What the per-study registration changes: the dashboard leaves `/` to the overview.
PER_STUDY_OPTIONS: dict[str, Any] = {
    "url_prefix": STUDY_PREFIX,
    "rename_rules": {"/": "/dashboard"},
    "skip_endpoints": frozenset(endpoint.partition(".")[2] for endpoint in UNSCOPED),
}


class _ConsoleSetupState(BlueprintSetupState):
    """Adds a blueprint's rules, renamed or skipped as the registration's options say."""

    def add_url_rule(self, rule: str, endpoint: str | None = None, view_func=None, **options):
        name = endpoint or (view_func.__name__ if view_func is not None else None)
        if name in self.options.get("skip_endpoints", ()):
            return
        rule = self.options.get("rename_rules", {}).get(rule, rule)
        super().add_url_rule(rule, endpoint, view_func, **options)


class ConsoleBlueprint(Blueprint):
    """A console blueprint: registered once for the default study and once per study."""

    def make_setup_state(self, app, options, first_registration=False):
        return _ConsoleSetupState(self, app, options, first_registration)


def _forget_slug(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Every request starts on no study's page (an app context shared with the caller, as
    in tests, keeps nothing)."""
    g.pop("console_slug", None)
    g.pop("console_study", None)


def take_slug(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """A url_value_preprocessor: the per-study registration's `<slug>` leaves the view's
    arguments and is kept for the request."""
    if values and "slug" in values:
        g.console_slug = values.pop("slug")


def console_slug() -> str | None:
    """The slug of the study whose per-study console page this request serves (None: a
    default-study page, or no console page)."""
    return g.get("console_slug") if has_request_context() else None


def console_url(endpoint: str, **values: Any) -> str:
    """url_for, but on a per-study console page a console endpoint (`research.X`,
    `adjudication.X`, login and logout aside) is the same page of the same study."""
    slug = console_slug()
    if slug is not None and endpoint not in UNSCOPED:
        blueprint, dot, name = endpoint.partition(".")
        if dot and blueprint in STUDY_BLUEPRINTS:
            endpoint = f"{STUDY_BLUEPRINTS[blueprint]}.{name}"
            values.setdefault("slug", slug)
    return url_for(endpoint, **values)


def register_console(app: Flask, blueprint: ConsoleBlueprint) -> None:
    """Register a console blueprint for the default study and per study, and make
    console_url the templates' url_for."""
    if _forget_slug not in app.url_value_preprocessors.get(None, []):
        app.url_value_preprocessor(_forget_slug)  # the app's run before the blueprints'
    app.register_blueprint(blueprint, url_prefix="/research")
    app.register_blueprint(blueprint, name=STUDY_BLUEPRINTS[blueprint.name], **PER_STUDY_OPTIONS)
    app.jinja_env.globals["url_for"] = console_url
