"""Heavy analyses as jobs, their results in the database (issue 31).

- `kinds.py`: the kinds of analysis (gamma, ...), each registered in one line.
- `results.py`: the `analysis_results` table, read and claimed by every process.
- `queue.py`: jobs on RQ over Redis (QUEUE_URL), or in a background thread without one.
- `limits.py`: ANALYSIS_TIME_LIMIT and ANALYSIS_MEMORY_LIMIT.
- `cli.py`: `flask analysis-worker`.

docs/architecture.md ("An analysis on the queue") says how to add a kind.
"""
