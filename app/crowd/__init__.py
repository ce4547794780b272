"""The crowd study: everything a worker goes through around the annotation task.

The route a worker takes (each step only when the taxonomy has it; journey.py says where a
session is, and every page sends the worker there):

    /start                      assignment/: the document that most needs annotators
      ▼
    /s/<token>/consent          surveys/    ── declined ───────────▶ /s/<token>/end
      ▼
    /s/<token>/survey/before    surveys/
      ▼
    /s/<token>/training         training/   ── failed training ────▶ /s/<token>/end
      ▼
    /s/<token>                  the task: app.annotate (its page and the worker API)
      ▼ Submit
    /s/<token>/survey/after     surveys/
      ▼
    /s/<token>/complete         the code (a Prolific worker: the outcome's completion URL)

Who they are and how they came (identity.py: Prolific, MTurk, signed or anonymous links;
submissions.py and prolific_api.py: one platform submission, one session), how many open
places one client network may hold (networks.py), their session (sessions.py: look up,
start or resume, completion; session_errors.py: the API's answers about it), the study's
settings (settings.py: the taxonomy's `study:` section with config overrides), reading
time per paragraph (paragraph_times.py) and the attention checks (checks/: planted
checks and who the figures leave out). The pure rules the taxonomy checks its `study:`
section with (outcomes, platforms) are in app/rules/. `cli.py`: `flask list-documents`.

The sub-packages with pages (assignment/, surveys/, training/) make their blueprints in
their routes.py, so that importing their other modules never starts the routes.
"""
