"""Configuration: environment classes, URL rewriting, production refusals."""

from __future__ import annotations

import pytest

from app import create_app
from app.taxonomy import TaxonomyError
from config.settings import (
    ConfigError,
    DevelopmentConfig,
    ProductionConfig,
    config_for,
    normalise_database_url,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgres://u:p@h:5432/d", "postgresql+psycopg2://u:p@h:5432/d"),
        ("postgresql://u:p@h/d", "postgresql+psycopg2://u:p@h/d"),
        ("postgresql+psycopg2://u@h/d", "postgresql+psycopg2://u@h/d"),
        ("sqlite:///x.db", "sqlite:///x.db"),
        ("", None),
        (None, None),
    ],
)
def test_database_url_rewrite(url, expected):
    assert normalise_database_url(url) == expected


def test_default_is_development_sqlite_in_instance(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("APP_ENV", raising=False)
    config = config_for()
    assert isinstance(config, DevelopmentConfig)
    assert config.SQLALCHEMY_DATABASE_URI == "sqlite:///falte.sqlite3"


def test_database_url_from_environment(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://a:b@db:5432/falte")
    assert config_for("development").SQLALCHEMY_DATABASE_URI.startswith("postgresql+psycopg2://")


def test_production_refuses_to_start_without_secret_key(monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(ConfigError, match="SECRET_KEY is not set"):
        create_app({"APP_ENV": "production"})


GOOD_KEY = "Vq3-rT8_zLm2Wx9pKd4Hs7Ny1Bc6Fg0JuEa5"  # 36 characters, 34 different


def test_production_with_secret_key(monkeypatch, tmp_path):
    monkeypatch.setenv("SECRET_KEY", GOOD_KEY)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/p.sqlite3")
    config = ProductionConfig()
    config.validate()
    assert config.SESSION_COOKIE_SECURE is True


def test_unknown_app_env():
    with pytest.raises(ConfigError, match="APP_ENV='staging'"):
        config_for("staging")


def test_prefixed_environment_overrides(monkeypatch):
    monkeypatch.setenv("FLASK_RATELIMIT_ENABLED", "false")
    app = create_app({"APP_ENV": "testing"})
    assert app.config["RATELIMIT_ENABLED"] is False


def test_bad_taxonomy_stops_the_app(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\ncategories: []\n")
    with pytest.raises(TaxonomyError, match=r"bad\.yaml:2: categories"):
        create_app({"APP_ENV": "testing", "TAXONOMY_PATH": str(bad)})


def test_rate_limit_storage_can_be_shared_redis(monkeypatch):
    # Several gunicorn workers, dynos or containers share limits through Redis.
    monkeypatch.setenv("RATELIMIT_STORAGE_URI", "redis://127.0.0.1:6390/0")
    app = create_app({"APP_ENV": "development", "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    assert app.config["RATELIMIT_STORAGE_URI"] == "redis://127.0.0.1:6390/0"
    from limits.storage import MemoryStorage, RedisStorage

    from app.core.rate_limits import EXTENSION

    assert isinstance(app.extensions[EXTENSION].storage, RedisStorage)
    monkeypatch.delenv("RATELIMIT_STORAGE_URI")
    default = create_app({"APP_ENV": "development", "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    assert isinstance(default.extensions[EXTENSION].storage, MemoryStorage)


def test_production_refuses_a_short_secret_key(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "k" * 31)
    with pytest.raises(
        ConfigError, match="SECRET_KEY has 31 characters; production needs at least 32"
    ):
        create_app({"APP_ENV": "production"})
    monkeypatch.setenv("SECRET_KEY", GOOD_KEY[:32])
    ProductionConfig().validate()


def test_production_refuses_a_key_of_few_different_characters(monkeypatch):
    # 32 identical characters are as long as asked, and as guessable as one.
    monkeypatch.setenv("SECRET_KEY", "k" * 32)
    few = "SECRET_KEY has only 1 different characters; production needs at least 16"
    with pytest.raises(ConfigError, match=few):
        create_app({"APP_ENV": "production"})
    monkeypatch.setenv("SECRET_KEY", ("0123456789abcde" * 3)[:40])  # 15 different
    with pytest.raises(ConfigError, match="only 15 different characters"):
        create_app({"APP_ENV": "production"})


@pytest.mark.parametrize("override", ["k", "k" * 32])
def test_production_checks_the_key_actually_used(monkeypatch, tmp_path, override):
    # FLASK_SECRET_KEY is applied after the config class: it replaced a checked SECRET_KEY,
    # and the app started with a one-character key.
    monkeypatch.setenv("SECRET_KEY", GOOD_KEY)
    monkeypatch.setenv("FLASK_SECRET_KEY", override)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/p.sqlite3")
    with pytest.raises(ConfigError, match="SECRET_KEY has"):
        create_app({"APP_ENV": "production"})
    monkeypatch.delenv("FLASK_SECRET_KEY")
    with pytest.raises(ConfigError, match="SECRET_KEY has"):
        create_app({"APP_ENV": "production", "SECRET_KEY": override})


def test_a_good_flask_secret_key_is_enough(monkeypatch, tmp_path):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.setenv("FLASK_SECRET_KEY", GOOD_KEY)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/p.sqlite3")
    app = create_app({"APP_ENV": "production"})
    assert app.config["SECRET_KEY"] == GOOD_KEY
