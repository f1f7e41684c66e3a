"""The fixed environment in which notebook outputs are produced and checked.

Both the test run (conftest.py) and the regeneration script apply it, so a
committed output and a fresh run see the same clock, time zone, hash seed,
locale and backend.
"""

from __future__ import annotations

import os

FROZEN_TIME = "2026-05-01T09:30:00+00:00"

NOTEBOOK_ENV = {
    "LESSON_FROZEN_TIME": FROZEN_TIME,  # lesson_lib.clock reads it: tool times are fixed
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
    "LC_ALL": "C.UTF-8",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",  # keeps a debugger warning out of stderr
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
}
REAL_PROVIDER_VARS = ("LESSON_BACKEND", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LESSON_MODEL")
OUTSIDE_SERVICES = ("LESSON_POSTGRES_URL",)  # notebook 10's optional PostgreSQL server


def apply_notebook_env(environ: dict | None = None) -> None:
    """Set the fixed environment (in os.environ by default) and force the offline model."""
    environ = os.environ if environ is None else environ
    environ.update(NOTEBOOK_ENV)
    for name in (*REAL_PROVIDER_VARS, *OUTSIDE_SERVICES):
        environ.pop(name, None)
