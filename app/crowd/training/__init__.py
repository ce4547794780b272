"""Training before the task (issue 17 point 1, docs/training.md): practice documents with
gold spans, feedback on "Check my answers", and the pass rule.

feedback.py holds the pure rules (matching, feedback, pass), service.py the database side
(practice documents, a worker's state in the study, attempts), routes.py the practice page
and its one API call (and the blueprints `bp`, `api_bp`), records.py the `--what training`
rows, summary.py the dashboard's figures.
"""
