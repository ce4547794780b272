"""The study steps around the task: consent and the surveys before and after it.

config.py (the taxonomy's `consent:` and `survey:`, pure), answers.py (a submitted form
-> answers or messages, pure), summary.py (the dashboard's figures, pure), store.py (the
database), routes.py (the worker pages and the blueprint `bp`). The step order is
app/crowd/journey.py. The blueprint lives in routes.py rather than here because app.taxonomy
imports config.py: a blueprint here would import the routes, and they the taxonomy.
"""
