"""Training before the task (issue 17 point 1, docs/training.md): practice documents with
gold spans, feedback on "Check my answers", and the pass rule.

feedback.py holds the pure rules (matching, feedback, pass), service.py the database side
(practice documents, a worker's state in the study, attempts), routes.py the practice page
and its one API call, export.py the `--what training` rows.
"""

from flask import Blueprint

bp = Blueprint("training", __name__)
api_bp = Blueprint("training_api", __name__)

from app.crowd.training import routes  # noqa: E402,F401
