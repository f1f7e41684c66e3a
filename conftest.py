"""Run-wide settings, applied before any notebook kernel starts (kernels inherit them):
a fixed clock, time zone, hash seed and locale, and always the offline model.

Also: nbval's kernel start is retried. A kernel's ports are picked by binding port 0 and
letting go; under xdist another process (a kernel, or a client of the offline model) can
take one of them before the kernel binds it, and the kernel dies at start ("Kernel died
before replying to kernel_info"), failing every cell of a notebook that is fine. CI saw
this once under Python 3.13. A start that fails is tried again with fresh ports, and what
the dead kernel printed is reported as a warning so a real start-up fault stays visible
(a kernel that fails three times still fails the notebook).

And nbval's kernels are forked from a warm process (tests/kernel_fork.py), as the Run All
runs' are: the same kernel, without paying Python's and IPython's start each time."""

import sys
import tempfile
import warnings
from pathlib import Path

from lesson_lib.testing import apply_notebook_env

apply_notebook_env()

KERNEL_START_ATTEMPTS = 3


def pytest_configure(config):
    try:
        from nbval import kernel as nbval_kernel
    except ImportError:  # nbval not installed: nothing to patch
        return
    if getattr(nbval_kernel.start_new_kernel, "retries_start", False):
        return
    first_try = nbval_kernel.start_new_kernel

    def start_new_kernel(startup_timeout=60, kernel_name="python", **kwargs):
        kwargs.pop("stderr", None)  # nbval sends it to /dev/null; keep it to report a death
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            with tempfile.TemporaryFile(mode="w+") as stderr:
                try:
                    return first_try(startup_timeout, kernel_name, stderr=stderr, **kwargs)
                except RuntimeError:
                    stderr.seek(0)
                    printed = stderr.read()[-2000:].strip() or "(nothing)"
                    warnings.warn(
                        f"notebook kernel start {attempt} of {KERNEL_START_ATTEMPTS} failed; "
                        f"the kernel printed:\n{printed}",
                        stacklevel=1,
                    )
                    if attempt == KERNEL_START_ATTEMPTS:
                        raise
        raise AssertionError("unreachable")

    start_new_kernel.retries_start = True
    nbval_kernel.start_new_kernel = start_new_kernel

    sys.path.insert(0, str(Path(__file__).parent / "tests"))
    import cpu_profile  # noqa: PLC0415
    from kernel_fork import with_forking  # noqa: PLC0415
    cpu_profile.register(config)  # benchmarks/suite_profile.py --cpu

    class ForkingSpecs(nbval_kernel.NbvalKernelspecManager):
        def get_kernel_spec(self, kernel_name):
            return with_forking(super().get_kernel_spec(kernel_name))

    nbval_kernel.NbvalKernelspecManager = ForkingSpecs
