"""`python -m lesson_lib.membench score FILE ... [--part held-out]`: a learner's strategy scored (lesson_lib.membench.grade)."""

import sys

from lesson_lib.membench.grade import main

if __name__ == "__main__":
    sys.exit(main())
