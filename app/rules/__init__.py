"""Pure rules: plain functions on plain data, no app, no database, no request.

Everything above may use them (docs/architecture.md); they use nothing of the app's.
"""
