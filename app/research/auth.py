"""Researcher authentication: Flask-Login's user loader and what anonymous requests get."""

from flask import redirect, request, url_for

from app.errors import envelope, wants_json
from app.extensions import db, login_manager
from app.models import Researcher

login_manager.login_view = "research.login"
login_manager.login_message = "Please log in as a researcher to see this page."


@login_manager.user_loader
def load_researcher(user_id: str) -> Researcher | None:
    """Flask-Login calls this with the id stored in the session cookie."""
    if not user_id.isdigit():
        return None
    return db.session.get(Researcher, int(user_id))


@login_manager.unauthorized_handler
def unauthorized():
    """JSON clients get 401 in the error envelope; browsers go to the login page."""
    if wants_json():
        return envelope(401, "unauthorized", "Log in as a researcher first.")
    return redirect(url_for("research.login", next=request.full_path.rstrip("?")))
