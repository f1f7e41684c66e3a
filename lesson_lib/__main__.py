"""`python -m lesson_lib`: the terminal chat with the memory agent."""

import sys

from lesson_lib.cli import main

if __name__ == "__main__":
    sys.exit(main())
