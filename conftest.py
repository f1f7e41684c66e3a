"""Run-wide settings, applied before any notebook kernel starts (kernels inherit them):
a fixed clock, time zone, hash seed and locale, and always the offline model."""

import os

os.environ["LESSON_FROZEN_TIME"] = "2026-05-01T09:30:00+00:00"
os.environ["TZ"] = "UTC"
os.environ["PYTHONHASHSEED"] = "0"
os.environ["LC_ALL"] = "C.UTF-8"
os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
for name in ("LESSON_BACKEND", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LESSON_MODEL"):
    os.environ.pop(name, None)
