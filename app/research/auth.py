"""Researcher authentication: login/logout, the login requirement on /research/, Flask-Login hooks.

Logins are limited per client address (LOGIN_RATE_LIMIT) and per account: failed logins
of one e-mail, from any address, lock it for a while (LOGIN_ACCOUNT_LIMIT,
LOGIN_ACCOUNT_LOCK_MINUTES; app.core.rate_limits' lockout, in the limits' shared storage); a
locked account answers 429 whatever the password. Unknown e-mails are counted the same,
so a lock says nothing about which accounts exist.

Every endpoint of the research blueprint needs a logged-in researcher except the login
page itself: `require_researcher` (app.core.researcher_guard) runs before each of them
(so pages added later by other modules of the blueprint are covered without a decorator
to forget). Anonymous browsers are redirected to the login page; JSON clients get 401 in
the error envelope.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user, login_user, logout_user
from flask_wtf import FlaskForm
from werkzeug.security import check_password_hash, generate_password_hash
from wtforms import BooleanField, EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from app.core.extensions import db, login_manager
from app.core.rate_limits import (
    check_lock,
    client_address,
    forget_failures,
    rate_limited,
    record_failure,
)
from app.core.researcher_guard import require_researcher, unauthorized
from app.models import Researcher, utcnow
from app.research import bp
from app.studies import default_study, role_of
from app.studies.access import check_console_study

# Compared against when the e-mail is unknown, so a wrong e-mail takes as long as a
# wrong password and response times do not reveal which accounts exist.
_DUMMY_HASH = generate_password_hash("not-a-real-password-0000")

login_manager.login_view = "research.login"
login_manager.login_message = "Please log in as a researcher to see this page."
login_manager.login_message_category = "info"


@login_manager.user_loader
def load_researcher(user_id: str) -> Researcher | None:
    """Flask-Login calls this with the id stored in the session or remember-me cookie:
    `<id>:<session_version>` (Researcher.get_id); a cookie issued before the researcher's
    last logout or password reset carries an older version and logs nobody in. A bare
    `<id>` (cookies from before versions existed) counts as version 0."""
    number, _, version = user_id.partition(":")
    version = version or "0"
    if not (number.isascii() and number.isdigit() and version.isascii() and version.isdigit()):
        return None
    researcher = db.session.get(Researcher, int(number))
    if researcher is None or researcher.session_version != int(version):
        return None
    return researcher


login_manager.unauthorized_handler(unauthorized)
bp.before_request(require_researcher)
bp.before_request(check_console_study)  # the page's study and the researcher's role in it


class LoginForm(FlaskForm):
    """E-mail and password; Flask-WTF adds the CSRF token."""

    email = EmailField("E-mail", validators=[DataRequired(), Length(max=320)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1000)])
    remember = BooleanField("Keep me logged in on this computer")


def safe_next(target: str | None) -> str | None:
    """`target` when it is a path on this site, else None (no open redirects)."""
    if not target or len(target) > 2000:
        return None
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None
    return target


LOCKOUT_SCOPE = "login-account"


def account_key(email: str) -> str:
    """The lockout key of an e-mail as typed (normalised as accounts are; hashed, so that
    the limits' storage holds no addresses)."""
    return hashlib.sha256(email.strip().lower().encode("utf-8")).hexdigest()[:32]


def authenticate(email: str, password: str) -> Researcher | None:
    """The researcher with this e-mail and password, or None."""
    researcher = db.session.scalars(
        db.select(Researcher).filter_by(email=email.strip().lower())
    ).first()
    if researcher is None:
        check_password_hash(_DUMMY_HASH, password)
        return None
    return researcher if check_password_hash(researcher.password_hash, password) else None


@bp.route("/login", methods=["GET", "POST"])
@rate_limited("LOGIN_RATE_LIMIT", "login", client_address, methods={"POST"})
def login():
    """The login form; on success go to `next` (a local path) or the dashboard."""
    form = LoginForm()
    next_url = safe_next(request.args.get("next"))
    if current_user.is_authenticated and request.method == "GET":
        return redirect(next_url or _home())
    status = 200
    if request.method == "POST":
        check_lock(LOCKOUT_SCOPE, account_key(request.form.get("email", "")))
    if form.validate_on_submit():
        account = account_key(form.email.data or "")
        researcher = authenticate(form.email.data or "", form.password.data or "")
        if researcher is not None:
            forget_failures("LOGIN_ACCOUNT_LIMIT", LOCKOUT_SCOPE, account)
            login_user(researcher, remember=bool(form.remember.data))
            researcher.last_login_at = utcnow()
            db.session.commit()
            return redirect(next_url or _home())
        record_failure("LOGIN_ACCOUNT_LIMIT", "LOGIN_ACCOUNT_LOCK_MINUTES", LOCKOUT_SCOPE, account)
        form.password.errors = [*form.password.errors, "Wrong e-mail or password."]
        status = 401
    elif request.method == "POST":
        status = 400
    return render_template("research/login.html", form=form, next_url=next_url), status


def _home() -> str:
    """Where a login without `next` lands: the default study's dashboard for its
    researchers, the list of studies for the others (docs/studies.md)."""
    if role_of(default_study(), current_user) is None:
        return url_for("studies_console.index")
    return url_for("research.dashboard")


@bp.post("/logout")
def logout():
    """Log out (POST with the CSRF token, so another site cannot log you out): every
    session and remember-me cookie of this researcher ends, on every browser."""
    if current_user.is_authenticated:
        current_user.end_sessions()
        db.session.commit()
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("research.login"))
