"""Where the library keeps files it can always rebuild: a folder in the user's own cache.

$XDG_CACHE_HOME/lesson_lib/<name>, by default ~/.cache/lesson_lib/<name> (on Windows under
%LOCALAPPDATA%); without a home folder, a new temporary folder of this process's own. Each
learner on a shared server has their own, and nothing is ever written into the repository
or at a fixed path that two users would share. Nothing is created here but that temporary
folder: the caller makes the folder when it writes.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def cache_folder(name: str) -> Path:
    """The user's cache folder for `name` (see the module's docstring)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not Path(base).is_absolute():  # unset, empty or relative: the XDG rules say ignore it
        base = os.environ.get("LOCALAPPDATA", "") if sys.platform == "win32" else ""
        if not base:
            try:
                base = str(Path.home() / ".cache")
            except RuntimeError:  # no home folder to be found
                return Path(tempfile.mkdtemp(prefix=f"lesson_lib-{name}-"))
    return Path(base) / "lesson_lib" / name
