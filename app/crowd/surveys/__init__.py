"""The study steps around the task: consent and the surveys before and after it.

answers.py (a submitted form -> answers or messages, pure), summary.py (the dashboard's
figures, pure), store.py (the database), routes.py (the worker pages and the blueprint
`bp`). The taxonomy's `consent:` and `survey:` sections are parsed by
app/taxonomy/surveys.py; the step order is app/crowd/journey.py.
"""
