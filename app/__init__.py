"""Application factory: reads like a table of contents.

Each register_* function imports what it registers when it runs, not when `app` is
imported: every module of the package (a background gamma worker, the check-taxonomy
plugin, gunicorn's logger class) imports `app` first, and must not load every blueprint
with it. These are the only imports inside functions in app/ (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from app.core.json_provider import SafeJSONProvider
from config.settings import ROOT, Config, config_for


def create_app(config: Config | Mapping[str, Any] | None = None) -> Flask:
    """Build the app: config, extensions, taxonomy, blueprints, CLI, error handlers."""
    app = Flask(__name__, static_folder="../static", template_folder="../templates")
    app.json = SafeJSONProvider(app)
    configure(app, config)
    register_extensions(app)
    register_blueprints(app)
    register_cli(app)
    register_errorhandlers(app)
    return app


def configure(app: Flask, config: Config | Mapping[str, Any] | None) -> None:
    """Config class for APP_ENV, then FLASK_* variables, then explicit overrides."""
    overrides: Mapping[str, Any] = {}
    if config is None or isinstance(config, Mapping):
        overrides = config or {}
        config = config_for(overrides.get("APP_ENV"))
    app.config.from_object(config)
    app.config["APP_ENV"] = config.ENV_NAME
    app.config.from_prefixed_env()
    app.config.update(overrides)
    # The settings actually used: a FLASK_SECRET_KEY or an override is checked too.
    config.validate(app.config)


def register_extensions(app: Flask) -> None:
    """Bind the unbound extensions and the taxonomy to this app."""
    from app import studies, taxonomy
    from app.core import i18n, security, static_urls, text_guard
    from app.core.extensions import csrf, db, limiter, login_manager, migrate
    from app.core.persistence import add_autocommit_bind

    text_guard.init_app(app)  # first: its check runs before CSRF and every view
    add_autocommit_bind(app)
    db.init_app(app)
    migrate.init_app(app, db, directory=str(ROOT / "migrations"))
    csrf.init_app(app)
    limiter.init_app(app)
    login_manager.init_app(app)
    taxonomy.init_app(app)
    studies.init_app(app)
    i18n.init_app(app)  # after the taxonomy: study.language picks the interface language
    security.init_app(app)
    static_urls.init_app(app)


def register_blueprints(app: Flask) -> None:
    """Mount each blueprint package at its URL prefix."""
    from app.adjudication import bp as adjudication_bp
    from app.annotate import api_bp as annotate_api_bp
    from app.annotate import bp as annotate_bp
    from app.core.console_urls import register_console
    from app.core.extensions import csrf
    from app.crowd.assignment.routes import bp as assignment_bp
    from app.crowd.surveys.routes import bp as surveys_bp
    from app.crowd.training.routes import api_bp as training_api_bp
    from app.crowd.training.routes import bp as training_bp
    from app.main import bp as main_bp
    from app.research import bp as research_bp
    from app.research.document_uploads import bp as study_setup_bp  # with its upload routes
    from app.research.study_pages import bp as studies_console_bp
    from app.validation import bp as validation_bp

    app.register_blueprint(main_bp)
    app.register_blueprint(annotate_bp)
    app.register_blueprint(annotate_api_bp)
    app.register_blueprint(assignment_bp)
    app.register_blueprint(training_bp)
    app.register_blueprint(training_api_bp)
    app.register_blueprint(surveys_bp)
    app.register_blueprint(validation_bp)
    # The console: the default study at /research, each study at /research/studies/<slug>.
    register_console(app, research_bp)
    register_console(app, adjudication_bp)
    app.register_blueprint(studies_console_bp, url_prefix="/research/studies")
    app.register_blueprint(study_setup_bp, url_prefix="/research/studies/<slug>")
    # Worker and validator APIs check a CSRF token derived from their capability token
    # (app.core.security), because a crowd platform's iframe may block the session cookie.
    csrf.exempt(annotate_api_bp)
    csrf.exempt(training_api_bp)
    csrf.exempt(validation_bp)
    csrf.exempt(surveys_bp)  # its forms carry the capability-derived token (app.crowd.surveys)


def register_cli(app: Flask) -> None:
    """Add the project's flask commands."""
    from app.cli import register

    register(app)


def register_errorhandlers(app: Flask) -> None:
    """JSON envelope for API clients, HTML pages for browsers."""
    from app.core.errors import register

    register(app)
