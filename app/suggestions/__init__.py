"""Model suggestions (issue 18): model annotations that workers Accept, Reject or Edit.

importer.py reads and stores them (`flask import-suggestions`), arms.py puts each worker
in an arm (show / none), decisions.py answers the page and the worker API (state, the
annotation an Accept or Edit makes, rejections, the move guard), records.py exports them
with their decisions and counts them per source. See docs/suggestions.md.
"""
