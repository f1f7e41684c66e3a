"""`python -m lesson_lib.offline serve [--port N] [--context-window N] [--workers N]
[--host ADDRESS --api-key KEY] [--state FILE]`

Serves the offline teaching model on http://127.0.0.1:PORT/v1 until Ctrl-C. Without --port
it takes a free port (learners sharing a server share 127.0.0.1, so no port is fixed) and
prints the URL, and the line to export: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1. For a classroom,
`--host 0.0.0.0` serves every network of this machine, and needs a key that every request
must then carry: `--api-key KEY`, or the key in LESSON_SERVE_API_KEY (which keeps it out
of the shell history and the process list).
"""

from __future__ import annotations

import argparse
import os
import sys

from lesson_lib.offline import DEFAULT_CONTEXT_WINDOW, MODEL_ID

KEY_ENV = "LESSON_SERVE_API_KEY"  # the same name as lesson_lib.offline.server.KEY_ENV
ANY_PORT = 0  # the same as lesson_lib.offline.server.ANY_PORT: a free port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lesson_lib.offline",
                                     description="The offline teaching model.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="answer OpenAI-compatible requests over HTTP",
        description=f"Serve the offline model (model={MODEL_ID!r}) on "
                    "http://127.0.0.1:PORT/v1 until Ctrl-C, with any API key, on a free port "
                    "unless --port names one (it prints the URL); or, with a key, on "
                    "another address for a classroom.")
    serve.add_argument("--port", type=int, default=ANY_PORT,
                       help="port to listen on (default: a free one, printed at start; "
                            "0 means the same)")
    serve.add_argument("--context-window", type=int, default=DEFAULT_CONTEXT_WINDOW,
                       help="tokens a request may use (default %(default)s)")
    serve.add_argument("--workers", type=int, default=2 if hasattr(os, "fork") else 1,
                       help="processes sharing the port, one per core (default %(default)s)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default %(default)s: this machine only); "
                            "0.0.0.0 serves every network of this machine and needs a key")
    serve.add_argument("--api-key", metavar="KEY", default=None,
                       help=f"the only API key accepted (default: ${KEY_ENV}; without "
                            "either, any key, on 127.0.0.1 only)")
    serve.add_argument("--state", metavar="FILE", default=None,
                       help="keep what the Responses API stores (responses, conversations) "
                            "in this SQLite file, across restarts (default: in memory, or "
                            "a temporary file the workers share)")
    args = parser.parse_args(argv)
    api_key = args.api_key if args.api_key is not None else os.environ.get(KEY_ENV) or None

    from lesson_lib.offline.server import serve as run  # noqa: PLC0415

    try:
        return run(args.port, args.context_window, args.host, workers=args.workers,
                   api_key=api_key, state_path=args.state)
    except (ValueError, OSError) as error:  # a refused host or key, a port already in use
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
