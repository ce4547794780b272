"""How the app's data leaves it, row by row: the annotation record declared once
(record.py), written by PostgreSQL itself where it can (postgres_copy.py), the annotations'
and sessions' rows (annotations.py, session_rows.py), and the CSV and JSON Lines writers
with the two kinds of export (writers.py: Export, Report).

The table of exports, which says what exists and in which formats, is
app/research/downloads.py: it also gathers the rows of the crowd study, the suggestions,
the adjudicated gold and the study report, which sit above this package
(docs/architecture.md).
"""
