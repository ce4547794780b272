"""Researcher authentication: Flask-Login's user loader and the login view's name."""

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
