"""`python -m lesson_lib.offline serve [--port N] [--context-window N] [--workers N]`

Serves the offline teaching model on http://127.0.0.1:N/v1 until Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys

from lesson_lib.offline import DEFAULT_CONTEXT_WINDOW, MODEL_ID


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lesson_lib.offline",
                                     description="The offline teaching model.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="answer OpenAI-compatible requests on 127.0.0.1",
        description=f"Serve the offline model (model={MODEL_ID!r}, any API key) on "
                    "http://127.0.0.1:PORT/v1 until Ctrl-C.")
    serve.add_argument("--port", type=int, default=8765, help="port (0: any free one)")
    serve.add_argument("--context-window", type=int, default=DEFAULT_CONTEXT_WINDOW,
                       help="tokens a request may use (default %(default)s)")
    serve.add_argument("--workers", type=int, default=2 if hasattr(os, "fork") else 1,
                       help="processes sharing the port, one per core (default %(default)s)")
    serve.add_argument("--host", default="127.0.0.1", help="127.0.0.1 only: others are refused")
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost"):  # the server refuses too; this is quicker
        parser.error(f"the offline server listens on 127.0.0.1 only, not {args.host!r}")

    from lesson_lib.offline.server import serve as run  # noqa: PLC0415

    try:
        return run(args.port, args.context_window, args.host, workers=args.workers)
    except (ValueError, OSError) as error:  # a refused host, a port already in use
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
