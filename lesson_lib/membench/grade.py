"""Scoring a learner's strategy from its file: the interface checked first, then its table row, so a teacher can rank a class.

    python -m lesson_lib.membench score path/to/agent.py [more.py ...] [--part held-out]
                                        [--no-send] [--no-times]

A learner's file defines **STRATEGY**: a subclass of `lesson_lib.membench.Strategy` (or a
function that takes the run's context and returns one), as notebook 13 builds it. Each
file is loaded, its strategy checked against the interface (`problems_of`: it is made
from a context, it answers every call, its request is a list of messages or a Responses
body, and a question is never kept), then run on the part (the public one, or the
teachers' held-out part) and printed as a row of `table()`. A file that breaks a rule is
named with the rule and the fix, in the user's language, and not scored; the others are.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lesson_lib.i18n import _
from lesson_lib.membench.run import Results, recording_client, run, table
from lesson_lib.membench.score import request_text
from lesson_lib.membench.strategies import Context, Strategy

NAME = "STRATEGY"  # the name a learner's file gives its strategy


class StrategyFileError(ValueError):
    """A learner's file that cannot be scored: the message names the rule and the fix."""


def _where(error: BaseException, path: Path) -> str:
    """The line of `path` an error came from, if it came from there."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).resolve() == path.resolve()]
    if isinstance(error, SyntaxError) and error.lineno:
        return f"{path.name}:{error.lineno}"
    return f"{path.name}:{frames[-1].lineno}" if frames else path.name


def load_strategy(path: str | Path) -> Callable[[Context], Strategy]:
    """The STRATEGY a file defines (StrategyFileError when it cannot be had)."""
    path = Path(path)
    if not path.is_file():
        raise StrategyFileError(_("{path}: no such file: give the path of a Python file "
                                  "that defines {name}").format(path=path, name=NAME))
    spec = importlib.util.spec_from_file_location(f"_membench_agent_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 (any error of the learner's file is reported)
        raise StrategyFileError(_("{where}: the file stops with {error}: a strategy file "
                                  "must run on its own (python {path}) before it can be "
                                  "scored").format(where=_where(error, path),
                                                   error=f"{type(error).__name__}: {error}",
                                                   path=path)) from None
    make = getattr(module, NAME, None)
    if make is None:
        found = sorted(k for k, v in vars(module).items()
                       if isinstance(v, type) and issubclass(v, Strategy) and v is not Strategy)
        hint = _(" (it defines {found}: add STRATEGY = {first})").format(
            found=", ".join(found), first=found[0]) if found else ""
        raise StrategyFileError(_("{path}: defines no {name}: the rule is that a strategy "
                                  "file names its strategy {name} = YourStrategy (a "
                                  "subclass of lesson_lib.membench.Strategy){hint}").format(
            path=path.name, name=NAME, hint=hint))
    if isinstance(make, Strategy):
        raise StrategyFileError(_("{path}: {name} is a strategy object: the rule is that "
                                  "{name} is the class (or a function of the context), made "
                                  "fresh for each conversation: write {name} = {cls}, "
                                  "without ()").format(path=path.name, name=NAME,
                                                       cls=type(make).__name__))
    if not callable(make) or (isinstance(make, type) and not issubclass(make, Strategy)):
        raise StrategyFileError(_("{path}: {name} is {what}: the rule is that {name} is a "
                                  "subclass of lesson_lib.membench.Strategy").format(
            path=path.name, name=NAME, what=repr(make)[:60]))
    make.strategy_name = getattr(make, "strategy_name", None) or path.stem
    return make


PROBE = "What is the capital of Freedonia?"


def problems_of(make: Callable[[Context], Strategy]) -> list[str]:
    """Why `make` breaks the Strategy interface (empty when it keeps it): it is made from
    a context, takes two sessions' messages, returns a request of the right shape, and a
    question asked is never in a later request (a probe is not remembered)."""
    client, model, _recorder = recording_client()
    found: list[str] = []
    with tempfile.TemporaryDirectory() as where:
        context = Context("probe", client, model, where)
        step = f"{getattr(make, '__name__', NAME)}(context)"
        try:
            strategy = make(context)
            if not isinstance(strategy, Strategy):
                return [_("{name}(context) gave {what}, not a Strategy: subclass "
                          "lesson_lib.membench.Strategy").format(
                    name=getattr(make, "__name__", NAME), what=type(strategy).__name__)]
            calls: list[tuple[str, Callable[[], Any]]] = [
                ("start_session", lambda: strategy.start_session("p1", "2026-03-02")),
                ("take", lambda: strategy.take({"role": "user", "content": "I'm vegetarian."})),
                ("take", lambda: strategy.take({"role": "assistant", "content": "Noted."})),
                ("end_session", strategy.end_session),
                ("start_session", lambda: strategy.start_session("p2", "2026-03-09")),
                ("request", lambda: strategy.request(PROBE)),
                ("request", lambda: strategy.request("Suggest a dinner.")),
            ]
            sent = []
            for method, call in calls:
                step = f"{method}()"
                sent.append(call())
            for request in sent[-2:]:
                if not _shaped(request):
                    found.append(_("request() returned {what}: return a list of messages "
                                   "([{{\"role\": ..., \"content\": ...}}, ...]) or a "
                                   "Responses body ({{\"input\": [...]}})").format(
                        what=type(request).__name__))
                    return found
            later = request_text(sent[-1])
            if "freedonia" in later:
                found.append(_("a question was kept: the request for a later question holds "
                               "the earlier question {probe!r}: request() must not remember "
                               "the question it is asked (keep only what take() is "
                               "given)").format(probe=PROBE))
            if "suggest a dinner" not in later:
                found.append(_("the request does not hold the question it was asked: put "
                               "the question last, as a user message"))
        except Exception as error:  # noqa: BLE001 (the learner's code: reported, not raised)
            found.append(_("{method} stops with {error}: every method of the interface "
                           "must run (see lesson_lib.membench.Strategy)").format(
                method=step, error=f"{type(error).__name__}: {error}"))
        finally:
            if context._store is not None:
                context._store.close()
    return found


def _shaped(request: Any) -> bool:
    if isinstance(request, Mapping):
        return "input" in request or "messages" in request
    return isinstance(request, list) and all(isinstance(m, Mapping) and "role" in m
                                             for m in request)


def score_files(paths: Sequence[str | Path], data: Mapping, *,
                send: bool = True) -> tuple[list[Results], list[str]]:
    """Each file's strategy checked, then run on `data`: (the results, the errors)."""
    results, errors = [], []
    for path in paths:
        try:
            make = load_strategy(path)
            broken = problems_of(make)
            if broken:
                raise StrategyFileError(_("{path}: breaks the strategy interface: {why}").format(
                    path=Path(path).name, why="; ".join(broken)))
            results.append(run(make, data, send=send, judge=False))
        except StrategyFileError as error:
            errors.append(str(error))
        except Exception as error:  # noqa: BLE001 (a learner's code failing mid-run)
            errors.append(_("{path}: the run stops with {error} at {where}: run the "
                            "strategy on the public part in the notebook to find why").format(
                path=Path(path).name, error=f"{type(error).__name__}: {error}",
                where=_where(error, Path(path))))
    return results, errors


def main(argv: list[str] | None = None) -> int:
    """`python -m lesson_lib.membench score FILE ... [--part held-out] [--no-send]`."""
    import argparse  # noqa: PLC0415

    from lesson_lib.membench.data import FILES, load  # noqa: PLC0415

    parser = argparse.ArgumentParser(
        prog="python -m lesson_lib.membench",
        description=_("Score memory strategies on the memory benchmark."))
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help=_("score strategy files (each defines "
                                                "STRATEGY), one table row each"))
    score.add_argument("files", nargs="+", metavar="FILE")
    score.add_argument("--part", choices=list(FILES), default="public", metavar="PART",
                       help=_("the part to score on: public (the default), or held-out "
                              "(the teachers')"))
    score.add_argument("--no-send", action="store_true",
                       help=_("score the requests as built, without calling the model"))
    score.add_argument("--no-times", action="store_true",
                       help=_("leave out the milliseconds per question (they change run "
                              "to run)"))
    args = parser.parse_args(argv)
    data = load(args.part)
    results, errors = score_files(args.files, data, send=not args.no_send)
    for error in errors:
        print(error, file=sys.stderr)
    if results:
        print(_("{part} part: {n} conversations").format(part=args.part,
                                                         n=len(data["conversations"])))
        print(table(results, times=not args.no_times))
    return 1 if errors else 0
