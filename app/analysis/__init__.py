"""Pure statistics of the third-wave analyses (docs/analyses.md): which spans are the same
error (`matching`), how many errors nobody found (`recall`), whether a model can replace
an annotator (`judge`, `alttest`), what model suggestions change (`arm_effects`) and how large a
study must be (`planner`).

Nothing here touches Flask or the database: each module takes plain tuples and
dataclasses and returns plain dicts in the JSON shapes of docs/analyses.md, so the
commands, pages and queue jobs that load the data stay thin.
"""
