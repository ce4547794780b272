"""Configuration classes, read from the environment when instantiated.

`config_for(APP_ENV)` picks the class; `create_app` then applies
`app.config.from_prefixed_env()` so any setting can be overridden as FLASK_<NAME>.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TAXONOMY = ROOT / "config" / "taxonomy.yaml"
INSECURE_DEV_KEY = "dev-only-insecure-key-change-me"
MIN_SECRET_KEY_LENGTH = 32
# A key of 32 identical characters is as guessable as a short one: production asks for this
# many different characters too (secrets.token_urlsafe(48) has about 50).
MIN_SECRET_KEY_DISTINCT = 16
GENERATE_KEY = "`python -c 'import secrets; print(secrets.token_urlsafe(48))'`"


class ConfigError(RuntimeError):
    """A setting is missing or malformed; the app refuses to start."""


def normalise_database_url(url: str | None) -> str | None:
    """Rewrite Heroku-style postgres:// URLs to the psycopg2 driver that we ship."""
    if not url:
        return None
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    return url


class Config:
    """Settings shared by every environment."""

    ENV_NAME = "base"

    def __init__(self) -> None:
        env = os.environ
        self.SECRET_KEY = env.get("SECRET_KEY") or INSECURE_DEV_KEY
        # A relative sqlite path is put in the instance folder by Flask-SQLAlchemy.
        self.SQLALCHEMY_DATABASE_URI = (
            normalise_database_url(env.get("DATABASE_URL")) or "sqlite:///falte.sqlite3"
        )
        self.SQLALCHEMY_ENGINE_OPTIONS = {
            "pool_pre_ping": env.get("DB_POOL_PRE_PING", "0") in ("1", "true", "yes")
        }
        if self.SQLALCHEMY_DATABASE_URI.startswith("postgresql"):
            self.SQLALCHEMY_ENGINE_OPTIONS.update(
                pool_size=int(env.get("DB_POOL_SIZE", "5")),
                max_overflow=int(env.get("DB_MAX_OVERFLOW", "5")),
            )
        # PostgreSQL: the worker's hot statements are prepared once per connection
        # (app.core.prepared); 0 behind a pooler in transaction mode (PgBouncer).
        self.DB_PREPARED_STATEMENTS = env.get("DB_PREPARED_STATEMENTS", "1") not in (
            "0",
            "false",
            "no",
        )
        self.TAXONOMY_PATH = env.get("TAXONOMY_PATH") or str(DEFAULT_TAXONOMY)
        # The analysis queue (app.jobs.queue): a redis:// or rediss:// URL; None: the rate
        # limits' RATELIMIT_STORAGE_URI when that is Redis, else in-process ("inprocess"
        # forces that).
        self.QUEUE_URL = env.get("QUEUE_URL") or None
        # Random continua for gamma's expected disorder (its Monte-Carlo standard error is
        # reported beside it), and what one document's analysis may take: seconds and
        # megabytes (0: no limit); beyond them it is skipped and reported so.
        self.GAMMA_SAMPLES = int(env.get("GAMMA_SAMPLES", "100"))
        self.ANALYSIS_TIME_LIMIT = float(env.get("ANALYSIS_TIME_LIMIT", "60"))
        self.ANALYSIS_MEMORY_LIMIT = int(env.get("ANALYSIS_MEMORY_LIMIT", "1024"))
        self.MAX_CONTENT_LENGTH = int(env.get("MAX_CONTENT_LENGTH", str(64 * 1024)))
        # The console's document upload (docs/studies.md): bytes per file and files per
        # upload; only that page takes bodies this large.
        self.DOCUMENT_UPLOAD_MAX_BYTES = int(
            env.get("DOCUMENT_UPLOAD_MAX_BYTES", str(50 * 1024 * 1024))
        )
        self.DOCUMENT_UPLOAD_MAX_FILES = int(env.get("DOCUMENT_UPLOAD_MAX_FILES", "4"))
        self.MAX_COMMENT_LENGTH = 2000
        # Rate limits (app.core.rate_limits): on, counted in memory per process unless
        # RATELIMIT_STORAGE_URI names a shared store (redis://...).
        self.RATELIMIT_ENABLED = True
        self.RATELIMIT_STORAGE_URI = env.get("RATELIMIT_STORAGE_URI", "memory://")
        # Proxies in front of the app that append the client's address to X-Forwarded-For
        # (Heroku's router: 1); 0 ignores the header.
        self.TRUSTED_PROXIES = int(env.get("TRUSTED_PROXIES", "0"))
        # Frame ancestors allowed to embed the worker pages (MTurk shows tasks in an iframe).
        self.FRAME_ANCESTORS = env.get(
            "FRAME_ANCESTORS",
            "'self' https://*.mturk.com https://*.amazon.com https://*.prolific.com",
        )
        self.SESSION_COOKIE_HTTPONLY = True
        self.SESSION_COOKIE_SAMESITE = "Lax"
        self.REMEMBER_COOKIE_HTTPONLY = True
        self.REMEMBER_COOKIE_SAMESITE = "Lax"
        # "Keep me logged in" lasts this long at most (logout and --reset end it sooner).
        self.REMEMBER_COOKIE_DURATION = timedelta(days=int(env.get("REMEMBER_COOKIE_DAYS", "14")))
        self.WTF_CSRF_TIME_LIMIT = None
        self.COMPLETION_URL = env.get("COMPLETION_URL")  # overrides taxonomy study.completion_url
        # None: the taxonomy's study section decides.
        abandon = env.get("ABANDON_AFTER_MINUTES")
        self.ABANDON_AFTER_MINUTES = int(abandon) if abandon else None
        # Workers whose recall on attention-check gold spans is below this are flagged.
        self.ATTENTION_CHECK_MIN_RECALL = float(env.get("ATTENTION_CHECK_MIN_RECALL", "0.5"))
        # ... or whose annotations on checks match gold spans below this share (precision).
        self.ATTENTION_CHECK_MIN_PRECISION = float(env.get("ATTENTION_CHECK_MIN_PRECISION", "0.5"))
        # The limits ("120 per minute"; several: "10/minute; 100/hour"), per capability
        # token, or per client address for logins.
        self.ANNOTATE_WRITE_LIMIT = env.get("ANNOTATE_WRITE_LIMIT", "120 per minute")
        self.VALIDATE_WRITE_LIMIT = env.get("VALIDATE_WRITE_LIMIT", "120 per minute")
        self.LOGIN_RATE_LIMIT = env.get("LOGIN_RATE_LIMIT", "10 per minute")
        # Failed logins of one researcher account (from any address) that lock it, and for
        # how many minutes (app.research.auth): 429 for that account meanwhile.
        self.LOGIN_ACCOUNT_LIMIT = env.get("LOGIN_ACCOUNT_LIMIT", "10 per 15 minutes")
        self.LOGIN_ACCOUNT_LOCK_MINUTES = float(env.get("LOGIN_ACCOUNT_LOCK_MINUTES", "15"))
        # Opens of a start link (/start, /annotate/..., /id=..., /validate/...) per client
        # address: room for a lab's workers behind one NAT, not for draining a study.
        self.OPEN_RATE_LIMIT = env.get("OPEN_RATE_LIMIT", "60 per minute")
        # Who may open without a platform id (app.crowd.identity): an unsigned `annotator=NAME`,
        # and a link naming nobody (a new anonymous worker; the taxonomy's
        # `study: anonymous: true` allows that in production too).
        self.UNSIGNED_ANNOTATOR_LINKS = True
        self.ANONYMOUS_WORKERS = True
        # Prolific arrivals (app.crowd.submissions): production refuses them unless the taxonomy
        # names its `study.prolific_study_id`, and without a SESSION_ID.
        self.REQUIRE_PROLIFIC_STUDY_ID = False
        # Prolific's API checks each new Prolific arrival when a token is set
        # (app.crowd.prolific_api); PROLIFIC_API_URL lets tests point at a stand-in.
        self.PROLIFIC_API_TOKEN = env.get("PROLIFIC_API_TOKEN") or None
        self.PROLIFIC_API_URL = env.get("PROLIFIC_API_URL") or "https://api.prolific.com"
        self.PROLIFIC_API_TIMEOUT = float(env.get("PROLIFIC_API_TIMEOUT") or "3")

    def validate(self, settings: Mapping[str, Any] | None = None) -> None:
        """Raise ConfigError for settings this environment cannot run without: those of
        `settings` (the app's config after every override) when given, else this object's."""


class DevelopmentConfig(Config):
    """Local development: plain HTTP on 127.0.0.1, SQLite by default."""

    ENV_NAME = "development"


class TestConfig(Config):
    """pytest: in-memory rate limits, fast password hashing, no CSRF secret from env."""

    ENV_NAME = "testing"

    def __init__(self) -> None:
        super().__init__()
        self.TESTING = True
        self.SQLALCHEMY_DATABASE_URI = "sqlite://"
        self.RATELIMIT_STORAGE_URI = "memory://"


class ProductionConfig(Config):
    """Heroku / docker-compose: PostgreSQL, Secure cookies, HSTS, a real SECRET_KEY."""

    ENV_NAME = "production"

    def __init__(self) -> None:
        super().__init__()
        self.SESSION_COOKIE_SECURE = True
        self.REMEMBER_COOKIE_SECURE = True
        self.PREFERRED_URL_SCHEME = "https"
        self.HSTS = True
        self.UNSIGNED_ANNOTATOR_LINKS = False
        self.ANONYMOUS_WORKERS = False
        self.REQUIRE_PROLIFIC_STUDY_ID = True

    def validate(self, settings: Mapping[str, Any] | None = None) -> None:
        """Production needs its own SECRET_KEY of at least 32 characters, 16 of them
        different: sessions, CSRF tokens and signed links derive from it, and a short or
        repetitive one can be guessed offline. `settings`: the key actually used (after
        FLASK_SECRET_KEY and explicit overrides), when given."""
        key = (settings if settings is not None else vars(self)).get("SECRET_KEY")
        check_secret_key(key if isinstance(key, str) else None)


def check_secret_key(key: str | None) -> None:
    """Raise ConfigError unless `key` is a production SECRET_KEY: set, not the development
    one, at least MIN_SECRET_KEY_LENGTH characters and MIN_SECRET_KEY_DISTINCT different
    ones."""
    if not key or key == INSECURE_DEV_KEY:
        raise ConfigError(
            f"SECRET_KEY is not set. In production set it to a long random value, e.g. "
            f"{GENERATE_KEY}."
        )
    if len(key) < MIN_SECRET_KEY_LENGTH:
        raise ConfigError(
            f"SECRET_KEY has {len(key)} characters; production needs at least "
            f"{MIN_SECRET_KEY_LENGTH}. Generate one with {GENERATE_KEY}."
        )
    distinct = len(set(key))
    if distinct < MIN_SECRET_KEY_DISTINCT:
        raise ConfigError(
            f"SECRET_KEY has only {distinct} different characters; production needs at least "
            f"{MIN_SECRET_KEY_DISTINCT}. Generate one with {GENERATE_KEY}."
        )


CONFIGS: dict[str, type[Config]] = {
    "development": DevelopmentConfig,
    "testing": TestConfig,
    "production": ProductionConfig,
}


def config_for(env_name: str | None = None) -> Config:
    """Instantiate the config class named by APP_ENV (default: development)."""
    name = (env_name or os.environ.get("APP_ENV") or "development").lower()
    try:
        return CONFIGS[name]()
    except KeyError:
        raise ConfigError(f"APP_ENV={name!r} is not one of {', '.join(sorted(CONFIGS))}") from None
