"""The background process of app.adjudication.gamma_cache:
`python -m app.adjudication.gamma_worker JOBFILE` computes the gamma of each job in the
file into the cache folder the file names, each in the limited child of
app.adjudication.gamma_runner. Its own module, which nothing imports, so that
`-m` never runs a module the package has already imported.
"""

import logging
import signal
import sys
from pathlib import Path

from app.adjudication.gamma_cache import compute_jobs

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    # Stopped by its web worker (SIGTERM): unwind, so that the limited child ends too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    compute_jobs(Path(sys.argv[1]))
