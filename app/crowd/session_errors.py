"""What the worker API answers about the session itself, before any rule of the action:
no session has this token (404, NO_SESSION), it is submitted (409), the study ended before
its task (409), an earlier step is pending (409). A leaf: the task's API (app.annotate),
training's (app.crowd.training) and the suggestions' decisions (app.suggestions) share
these answers without importing each other."""

from __future__ import annotations

from app.core.errors import ApiError

NO_SESSION = "No annotation session has this link. Check the address."


def submitted_error() -> ApiError:
    """The 409 for a change to a submitted (read-only) session."""
    return ApiError(
        409,
        "session_submitted",
        "This task has already been submitted; it can no longer be changed.",
    )


def study_ended_error() -> ApiError:
    """409: the study ended for this session before its task (declined, failed)."""
    return ApiError(409, "study_ended", "The study has ended for this task; reload the page.")


def step_pending_error() -> ApiError:
    """409: the task opens after the study's earlier steps (consent, surveys, training)."""
    return ApiError(
        409,
        "step_pending",
        "This task opens after the earlier steps of the study; reload the page.",
    )
