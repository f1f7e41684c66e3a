"""Run-wide settings, applied before any notebook kernel starts (kernels inherit them):
a fixed clock, time zone, hash seed and locale, and always the offline model."""

from lesson_lib.testing import apply_notebook_env

apply_notebook_env()
