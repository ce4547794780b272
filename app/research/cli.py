"""`flask create-researcher EMAIL`: accounts for the researcher console."""

from __future__ import annotations

import re
import sys

import click
from flask.cli import with_appcontext
from werkzeug.security import generate_password_hash

from app.core.extensions import db
from app.models import Researcher

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1000
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def normalise_email(email: str) -> str:
    """Trimmed, lower-case e-mail; ClickException when it does not look like one."""
    email = email.strip().lower()
    if len(email) > 320 or not EMAIL_RE.match(email):
        raise click.BadParameter(f"{email!r} is not an e-mail address.", param_hint="EMAIL")
    return email


def check_password(password: str) -> str:
    """The password when long enough; ClickException otherwise."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise click.ClickException(
            f"The password must have at least {MIN_PASSWORD_LENGTH} characters "
            f"(it has {len(password)})."
        )
    if len(password) > MAX_PASSWORD_LENGTH:
        raise click.ClickException(f"The password must have at most {MAX_PASSWORD_LENGTH}.")
    return password


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        # The first line only, without its line break: `echo "$PW" | flask ...` works.
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt(
        f"Password (at least {MIN_PASSWORD_LENGTH} characters)",
        hide_input=True,
        confirmation_prompt="Repeat the password",
    )


@click.command("create-researcher")
@click.argument("email")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input instead of prompting.",
)
@click.option(
    "--reset",
    is_flag=True,
    help="Change the password of an existing account instead of creating one.",
)
@with_appcontext
def create_researcher_command(email: str, password_stdin: bool, reset: bool) -> None:
    """Create a researcher account for the /research/ console (or --reset its password).

    Prompts for the password twice unless --password-stdin is given. Passwords need at
    least 10 characters and are stored as salted hashes (werkzeug).
    """
    email = normalise_email(email)
    existing = db.session.scalars(db.select(Researcher).filter_by(email=email)).first()
    if existing is not None and not reset:
        raise click.ClickException(
            f"A researcher with e-mail {email} already exists. Use --reset to change the password."
        )
    if existing is None and reset:
        raise click.ClickException(f"No researcher has e-mail {email}; nothing to reset.")
    password_hash = generate_password_hash(check_password(_read_password(password_stdin)))
    if existing is None:
        db.session.add(Researcher(email=email, password_hash=password_hash))
        message = f"Created researcher {email}. Log in at /research/login."
    else:
        existing.password_hash = password_hash
        existing.end_sessions()  # whoever was logged in with the old password is logged out
        message = (
            f"Changed the password of researcher {email}; every existing login of it has ended."
        )
    db.session.commit()
    click.echo(message)
