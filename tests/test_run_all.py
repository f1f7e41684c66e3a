"""Every notebook runs top to bottom, as Run All does, in worlds a learner may be in.

nbval checks the outputs on the frozen clock with the offline model. Here each notebook
is executed again (tests/run_all.py) on a learner's real clock in UTC+14 and UTC-11, at a
daylight-saving change, at the last second of a year, and against a served model that is
not the offline one (tests/other_model.py), reached as a real provider is. A run fails on
an error in a cell not tagged `raises-exception`, on a tagged cell that did not raise, on
an output that shows the API key, and on a file it creates or changes in the repository;
the failure lists every problem as `notebook: cell N (first line): ErrorName: message`.

A world that could only repeat another run (of the same notebook, or of its English twin
when only the strings differ) is skipped, and says why
(see "the notebooks" below).

The first tests show that the stand-in and the runner can fail (tiny notebooks in tmp_path).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import nbformat
import openai
import pytest
from messages import WEATHER_TOOL
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from other_model import (
    DECLINE,
    OTHER_API_KEY,
    OTHER_MODEL_ID,
    declines,
    reword,
    serve_other_model,
)
from run_all import (
    NOTEBOOKS,
    WORLDS,
    code_shape,
    english_twin,
    kernel_env,
    label,
    reads_time_itself,
    run_notebook,
)

from lesson_lib.offline import MODEL_ID, offline_client

WEATHER = WEATHER_TOOL
TIME = {"type": "function", "function": {
    "name": "get_current_time", "description": "Get the current time in a time zone",
    "parameters": {"type": "object", "properties": {
        "timezone": {"type": "string", "description": "an IANA time zone, e.g. Asia/Shanghai"}},
        "required": ["timezone"]}}}
TOOLS = [WEATHER, TIME]
CITIES = ["Chengdu", "Shanghai", "Beijing", "Tokyo", "London", "Paris", "Berlin", "Sydney",
          "New York", "Guangzhou", "Shenzhen", "Hangzhou"]
# Tool-worthy questions for which the offline model makes two (parallel) calls.
PAIRS = [f"What's the weather in {a} and {b}?" for a, b in zip(CITIES, CITIES[1:], strict=False)]


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# ----------------------------------------------------------------- the other model

@pytest.fixture(scope="session")
def other_model():
    server = serve_other_model()
    yield server
    server.stop()


@pytest.fixture
def other(other_model):
    return openai.OpenAI(base_url=other_model.base_url, api_key=OTHER_API_KEY, max_retries=0)


@pytest.fixture
def offline():
    return offline_client()


def ask(client, model: str, messages: list[dict], **kw):
    return client.chat.completions.create(model=model, messages=messages, temperature=0, **kw)


def test_the_other_model_is_listed_under_its_own_id(other):
    assert [m.id for m in other.models.list()] == [OTHER_MODEL_ID]
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        ask(other, MODEL_ID, user("Hello!"))  # the offline model's id is not served here


def test_text_is_reworded_but_keeps_the_name(other, offline):
    talk = user("My name is Xiaoming") + [
        {"role": "assistant", "content": "Nice to meet you!"}] + user("What's my name?")
    theirs, ours = ask(other, OTHER_MODEL_ID, talk), ask(offline, MODEL_ID, talk)
    said, offline_said = theirs.choices[0].message.content, ours.choices[0].message.content
    assert "Xiaoming" in said and "Xiaoming" in offline_said
    assert offline_said not in said and said.split()[0] != offline_said.split()[0]
    assert theirs.model == OTHER_MODEL_ID
    assert theirs.usage == ours.usage  # the offline model's count, kept
    assert ask(other, OTHER_MODEL_ID, talk).choices[0].message.content == said  # deterministic


def test_rewording_keeps_facts_and_a_closing_question():
    text = ("Shanghai is warmer: 22°C, against 18°C in Beijing. "
            "It is 2026-05-01 17:30:00 CST+0800 in Asia/Shanghai.")
    said = reword(text)
    for fact in ("Shanghai", "22°C", "18°C", "Beijing", "2026-05-01 17:30:00 CST+0800"):
        assert fact in said
    assert "Shanghai is warmer" not in said and not said.startswith("It is")
    asked = reword("Nice to meet you, Bob! Which city would you like the weather for?")
    assert "Bob" in asked and "weather" in asked and asked.endswith("?")
    assert "小明" in reword("你刚才说你叫小明。", "zh")
    summary = reword("Summary so far: the user's name is Xiaoming. The user asked: “Hi?”.")
    assert "the user's name is Xiaoming" in summary  # a summary stays readable as a note


def test_never_more_than_one_tool_call(other, offline):
    single = 0
    for question in PAIRS:
        assert len(ask(offline, MODEL_ID, user(question), tools=TOOLS)
                   .choices[0].message.tool_calls) == 2
        message = ask(other, OTHER_MODEL_ID, user(question), tools=TOOLS,
                      parallel_tool_calls=True).choices[0].message
        assert len(message.tool_calls or []) <= 1
        single += len(message.tool_calls or []) == 1
    assert single >= len(PAIRS) // 2


def test_some_tool_worthy_questions_are_answered_without_a_tool(other):
    declined = [q for q in PAIRS if declines({"messages": user(q), "tools": TOOLS})]
    assert 0 < len(declined) < len(PAIRS)
    for choice in (None, "auto"):
        kw = {"tool_choice": choice} if choice else {}
        reply = ask(other, OTHER_MODEL_ID, user(declined[0]), tools=TOOLS, **kw).choices[0]
        assert reply.message.tool_calls is None and reply.message.content == DECLINE["en"]
        assert reply.finish_reason == "stop"


def test_a_forced_tool_choice_always_calls(other):
    named = {"type": "function", "function": {"name": "get_current_time"}}
    for question in PAIRS + ["Hello!", "What's my name?"]:
        required = ask(other, OTHER_MODEL_ID, user(question), tools=TOOLS,
                       tool_choice="required").choices[0]
        assert len(required.message.tool_calls) == 1 and required.finish_reason == "tool_calls"
        forced = ask(other, OTHER_MODEL_ID, user(question), tools=TOOLS,
                     tool_choice=named).choices[0].message
        assert [c.function.name for c in forced.tool_calls] == ["get_current_time"]


def test_a_streamed_answer_is_the_same_answer(other):
    for messages, kw in [(user("My name is Xiaoming. Hello!"), {}),
                         (user(PAIRS[0]), {"tools": TOOLS, "tool_choice": "required"})]:
        whole = ask(other, OTHER_MODEL_ID, messages, **kw)
        text, calls, usage = "", {}, None
        for chunk in ask(other, OTHER_MODEL_ID, messages, stream=True,
                         stream_options={"include_usage": True}, **kw):
            assert chunk.model == OTHER_MODEL_ID
            usage = chunk.usage or usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    calls.setdefault(call.index, "")
                    calls[call.index] += call.function.arguments or ""
        message = whole.choices[0].message
        assert text == (message.content or "")
        assert list(calls.values()) == [c.function.arguments for c in message.tool_calls or []]
        assert usage == whole.usage


def test_an_invalid_history_still_gets_the_400(other, offline):
    orphan = [{"role": "tool", "tool_call_id": "call_x", "content": "16°C"}] + user("Hot?")
    with pytest.raises(openai.BadRequestError) as theirs:
        ask(other, OTHER_MODEL_ID, orphan)
    with pytest.raises(openai.BadRequestError) as ours:
        ask(offline, MODEL_ID, orphan)
    assert theirs.value.body == ours.value.body and theirs.value.status_code == 400
    refused = openai.OpenAI(base_url=other.base_url, api_key="sk-bad-key-123456", max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="Incorrect API key"):
        ask(refused, OTHER_MODEL_ID, user("Hello!"))


# ----------------------------------------------------------------- the runner can fail

def notebook(tmp_path, name: str, cells: list) -> object:
    nb = new_notebook(cells=[new_markdown_cell("# a test notebook")] + cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def raises(source: str):
    return new_code_cell(source, metadata={"tags": ["raises-exception"]})


SECRET = "sk-test-secret-1234"
CLOCK_BOUND = ('from lesson_lib.clock import now\n'
               'assert now().isoformat().startswith("2026-05-01")')


@pytest.fixture
def bad_notebook(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return notebook(tmp_path, "bad", [
        new_code_cell("print('hello')"),
        new_code_cell(CLOCK_BOUND),
        raises("x = 1  # meant to raise, but does not"),
        new_code_cell("# not meant to raise\nraise ValueError('boom')"),
        raises("1 / 0"),
        new_code_cell("import os\nprint(os.environ['OPENAI_API_KEY'])"),
        new_code_cell("open('memory.json', 'w').write('{}')"),
        new_code_cell("int('seven')"),
        new_code_cell("import subprocess\nsubprocess.run(['touch', 'by_a_child.txt'], check=True)"),
    ])


def test_runner_reports_every_problem_in_the_real_clock_world(bad_notebook, tmp_path):
    if abs(datetime.now(timezone.utc).date() - date(2026, 5, 1)) <= timedelta(days=1):
        pytest.skip("today is the frozen day: the clock-bound cell passes on the real clock")
    env = {**kernel_env(WORLDS["real-clock-kiritimati"]), "OPENAI_API_KEY": SECRET}
    run = run_notebook(bad_notebook, env, secret=SECRET, repo=tmp_path)
    assert run.problems == [
        "bad: cell 1 (from lesson_lib.clock import now): AssertionError: (no message) "
        "[line 2: assert now().isoformat().startswith(\"2026-05-01\")]",
        "bad: cell 2 (x = 1  # meant to raise, but does not): did not raise (the cell is "
        "tagged raises-exception)",
        "bad: cell 3 (raise ValueError('boom')): ValueError: boom [line 2: raise "
        "ValueError('boom')]",
        "bad: cell 5 (import os): an output shows the API key",
        "bad: cell 7 (int('seven')): ValueError: invalid literal for int() with base 10: "
        "'seven' [line 1: int('seven')]",
        "bad: cell 6 (open('memory.json', 'w').write('{}')): wrote memory.json (a file in the "
        "repository)",
        "bad: by_a_child.txt appeared while it ran (git status)",
    ]


def test_the_clock_bound_cell_passes_on_the_frozen_clock(bad_notebook):
    env = {**kernel_env(WORLDS["dst-new-york"]), "OPENAI_API_KEY": SECRET,
           "LESSON_FROZEN_TIME": "2026-05-01T09:30:00+00:00"}
    problems = run_notebook(bad_notebook, env, repo=None).problems
    assert [p.split(" (")[0] for p in problems] == ["bad: cell 2", "bad: cell 3", "bad: cell 7"]


def test_a_clean_notebook_has_no_problems(tmp_path):
    path = notebook(tmp_path, "clean", [new_code_cell("x = 2 + 2"), raises("x / 0"),
                                        new_code_cell("assert x == 4")])
    assert run_notebook(path, kernel_env(WORLDS["real-clock-pago-pago"]), repo=None
                        ).problems == []


def test_a_run_counts_the_kernel_s_cpu_not_its_waiting(tmp_path):
    """run.cpu_seconds is what the kernel computed (the suite's floor, benchmarks/
    notebook_cpu.py), not the time it slept."""
    busy = notebook(tmp_path, "busy", [new_code_cell("sum(i * i for i in range(3_000_000))")])
    idle = notebook(tmp_path, "idle", [new_code_cell("import time; time.sleep(1)")])
    world = kernel_env(WORLDS["real-clock-pago-pago"])
    busy_run, idle_run = (run_notebook(p, world, repo=None) for p in (busy, idle))
    assert busy_run.cpu_seconds > 0.1 and idle_run.seconds > 1
    assert idle_run.cpu_seconds < busy_run.cpu_seconds


def test_a_kernel_that_never_came_up_is_started_once_more(tmp_path, monkeypatch):
    """A kernel that cannot start (its port taken by another process meanwhile, on a busy
    machine) is no problem of the notebook: the run starts a new kernel once; a second
    failure is reported."""
    import nbclient

    path = notebook(tmp_path, "plain", [new_code_cell("x = 1")])
    world = kernel_env(WORLDS["real-clock-pago-pago"])
    real, calls = nbclient.NotebookClient.execute, []

    def flaky(self, *args, **kwargs):
        calls.append(1)
        if len(calls) <= failures:
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(nbclient.NotebookClient, "execute", flaky)
    failures = 1
    assert run_notebook(path, world, repo=None, watch_clock=True).problems == []
    assert len(calls) == 2
    calls.clear()
    failures = 2
    problems = run_notebook(path, world, repo=None).problems
    assert len(calls) == 2 and "Kernel didn't respond" in problems[0]


def test_the_clock_watch_sees_the_library_read_the_clock(tmp_path):
    reads = notebook(tmp_path, "reads", [new_code_cell(
        "from lesson_lib.tools import get_current_time\nget_current_time('Asia/Tokyo')")])
    quiet = notebook(tmp_path, "quiet", [new_code_cell(
        "from lesson_lib.memory import ShortTermMemory\nShortTermMemory(max_messages=4)")])
    env = kernel_env(WORLDS["real-clock-kiritimati"])
    assert run_notebook(reads, env, repo=None, watch_clock=True).read_the_clock is True
    assert run_notebook(quiet, env, repo=None, watch_clock=True).read_the_clock is False
    assert run_notebook(quiet, env, repo=None).read_the_clock is None  # not watched


def test_a_notebook_that_imports_a_time_module_is_run_in_every_world(tmp_path):
    cells = ["import datetime", "from time import localtime", "from lesson_lib import clock",
             "from lesson_lib.clock import frozen", "import zoneinfo as z", "%time x = 1\nclock"]
    for n, source in enumerate(cells):
        path = notebook(tmp_path, f"t{n}", [new_code_cell("x = 1"), new_code_cell(source)])
        assert time_read_by_code(path), source
        for world in WORLDS.values():
            assert repeats(path, world, False) is None, (source, world.name)
    plain = notebook(tmp_path, "plain", [new_code_cell("timeline = 'time'\nprint(timeline)")])
    assert not time_read_by_code(plain)
    assert repeats(plain, WORLDS["real-clock-pago-pago"], None) is not None
    assert repeats(plain, WORLDS["dst-new-york"], None) is None       # not known yet: run
    assert repeats(plain, WORLDS["dst-new-york"], True) is None       # it read the clock: run
    assert repeats(plain, WORLDS["dst-new-york"], False) is not None  # it did not: the same
    assert repeats(plain, WORLDS["other-model"], False) is None


def test_a_chinese_twin_differing_only_in_strings_runs_only_where_text_matters(tmp_path):
    english = notebook(tmp_path, "n", [
        new_code_cell("import datetime\nanswer = agent.chat('What time is it?')  # ask"),
        new_code_cell("print(f'{answer} in {len(answer)} characters')")])
    (tmp_path / "zh").mkdir()
    twin = notebook(tmp_path / "zh", "n", [
        new_code_cell("import datetime\nanswer = agent.chat('现在几点？')  # 问"),
        new_code_cell("print(f'{answer}，共 {len(answer)} 个字')")])
    assert english_twin(twin) == english and english_twin(english) is None
    assert code_shape(nbformat.read(twin, 4)) == code_shape(nbformat.read(english, 4))
    for world in WORLDS.values():
        expected_run = world.name == ANCHOR or world.other_model
        assert (repeats(twin, world, True) is None) == expected_run, world.name
        assert repeats(english, world, True) is None, world.name  # it reads the clock
    other = notebook(tmp_path / "zh", "m", [
        new_code_cell("import datetime\nanswer = agent.chat('现在几点？', tools=[])"),
        new_code_cell("print(f'{answer}，共 {len(answer)} 个字')")])
    notebook(tmp_path, "m", [
        new_code_cell("import datetime\nanswer = agent.chat('What time is it?')"),
        new_code_cell("print(f'{answer} in {len(answer)} characters')")])
    assert repeats(other, WORLDS["dst-new-york"], True) is None  # its code differs: it runs


def test_the_world_reaches_the_kernel(tmp_path, other_model):
    path = notebook(tmp_path, "env", [new_code_cell(
        "import json, os, sys, time\n"
        "names = ['TZ', 'LESSON_FROZEN_TIME', 'LESSON_BACKEND', 'OPENAI_BASE_URL',"
        " 'LESSON_MODEL', 'PYTHONPATH']\n"
        "print(json.dumps({**{n: os.environ.get(n) for n in names}, 'cwd': os.getcwd(),"
        " 'zone': time.strftime('%Z'), 'python': sys.executable}))")])
    seen = {}
    for name in ("new-year-shanghai", "real-clock-pago-pago", "other-model"):
        world = WORLDS[name]
        env = kernel_env(world, other_model.environ() if world.other_model else None)
        run = run_notebook(path, env, repo=None)
        assert run.problems == []
        seen[name] = json.loads(run.nb.cells[1].outputs[0]["text"])
        assert seen[name]["cwd"] == str(tmp_path)  # Run All's working directory
        assert seen[name]["PYTHONPATH"] == env.get("PYTHONPATH")  # CI's guard stays on it
        assert seen[name]["python"] == sys.executable  # the project's environment
    assert seen["new-year-shanghai"]["TZ"] == "Asia/Shanghai"
    assert seen["new-year-shanghai"]["zone"] == "CST"
    assert seen["new-year-shanghai"]["LESSON_FROZEN_TIME"] == "2026-12-31T23:59:59+00:00"
    assert seen["real-clock-pago-pago"]["LESSON_FROZEN_TIME"] is None
    assert seen["real-clock-pago-pago"]["zone"] == "SST"
    assert seen["real-clock-pago-pago"]["LESSON_BACKEND"] is None
    assert seen["other-model"]["LESSON_BACKEND"] == "openai"
    assert seen["other-model"]["OPENAI_BASE_URL"] == other_model.base_url
    assert seen["other-model"]["LESSON_MODEL"] == OTHER_MODEL_ID


# ----------------------------------------------------------------- the notebooks
#
# Every notebook of both editions in 5 worlds, runs of 1 to 15 s each (07 longer). With
# --dist loadfile every test of this file goes to one worker, so the runs are started ahead,
# JOBS at a time, in kernels of their own (forked from a warm process: tests/kernel_fork.py;
# the longest first), and each test waits for its own. The tests still pass or fail one by one.
#
# A world that can only repeat another run is not run again (the test says so and is
# skipped). A Chinese notebook whose code is its English twin's but for the strings
# (run_all.code_shape) runs in the anchor world and against the other model; in the
# clock worlds the English run shows what the clock does to that code, and
# tests/test_clock_worlds.py asks the offline model in Chinese at each of those instants.
# The library reads the time only through lesson_lib.clock.now(), in a zone it
# names, never the machine's (tests/test_clock.py holds it to that). So for a notebook whose
# own code imports no time module (run_all.reads_time_itself):
# - the time zone cannot matter: the second real-clock world repeats the first;
# - and when its run in the first world never called lesson_lib.clock.now() (a silent watch
#   in the kernel notes it), the frozen clocks cannot matter either.

# Kernels at once; the suite runs on 2 cores next to the other xdist worker.
JOBS = max(1, int(os.environ.get("LESSON_RUN_ALL_JOBS", "2")))
SAME_WORKER = ("no", "loadfile", "loadscope")  # dist modes that keep this file on one worker
ANCHOR = "real-clock-kiritimati"  # the run the others may repeat


def api_key(path, world) -> str:
    return f"other-model-key-{label(path).replace('/', '-')}"  # one per run: counted apart


@functools.cache
def time_read_by_code(path) -> tuple[str, ...]:
    return tuple(reads_time_itself(nbformat.read(path, as_version=4)))


@functools.cache
def same_shape(path, twin) -> bool:
    return code_shape(nbformat.read(path, as_version=4)) == \
        code_shape(nbformat.read(twin, as_version=4))


@dataclass(frozen=True)
class Repeats:
    """A world whose run would repeat the anchor's, and why."""
    why: str


def repeats(path, world, anchor_read_the_clock: bool | None) -> Repeats | None:
    """Repeats(why) when running `path` in `world` would repeat its run in the anchor world;
    None when it must run (`anchor_read_the_clock`: what that run saw; None: not known yet)."""
    if world.other_model or world.name == ANCHOR:
        return None
    twin = english_twin(path)
    if twin is not None and same_shape(path, twin):
        return Repeats(f"the code of {twin.stem} but for its strings: that run shows what "
                       "this clock does to the code (the Chinese answers at this instant: "
                       "tests/test_clock_worlds.py)")
    if time_read_by_code(path):
        return None
    if world.frozen_at is None:
        return Repeats(f"its code imports no time module and the library never reads the "
                       f"time zone: the same run as {ANCHOR}")
    if anchor_read_the_clock is False:
        return Repeats(f"its code imports no time module, and in {ANCHOR} it never read "
                       "lesson_lib.clock.now(): a frozen clock is the same run")
    return None


class Runs:
    """Notebook runs started ahead in a thread pool (kernels are processes of their own)."""

    def __init__(self, wanted: list, server, jobs: int):
        self.server, self.futures, self.lock = server, {}, threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="run-all")
        self.wanted = {(path, world.name) for path, world in wanted}
        # the anchors first (the frozen worlds wait on them), each group longest first
        longest_first = sorted(wanted, key=lambda pw: (pw[1].name != ANCHOR,
                                                       -expected_seconds(*pw)))
        for path, world in longest_first:
            if world.name == ANCHOR or repeats(path, world, None) is None and (
                    world.frozen_at is None or (path, ANCHOR) not in self.wanted):
                self.submit(path, world)
        for path, world in longest_first:
            if world.frozen_at is not None and (path, world.name) not in self.futures \
                    and repeats(path, world, None) is None:
                self.futures[path, ANCHOR].add_done_callback(
                    lambda done, path=path, world=world: self.after_anchor(path, world, done))

    def after_anchor(self, path, world, done):
        run = None if done.cancelled() or done.exception() else done.result()
        if run is None or repeats(path, world, run.read_the_clock) is None:
            self.submit(path, world)

    def submit(self, path, world):
        with self.lock:
            if (path, world.name) not in self.futures:
                self.futures[path, world.name] = self.pool.submit(self.run, path, world)

    def run(self, path, world):
        provider = self.server.environ(api_key(path, world)) if world.other_model else None
        return run_notebook(path, kernel_env(world, provider),
                            secret=provider["OPENAI_API_KEY"] if provider else None,
                            watch_clock=world.name == ANCHOR)

    def get(self, path, world):
        if world.name != ANCHOR and world.frozen_at is not None \
                and (path, ANCHOR) in self.futures:
            anchor = self.futures[path, ANCHOR].result()
            same = repeats(path, world, anchor.read_the_clock)
        elif world.name != ANCHOR and (path, ANCHOR) in self.futures:
            same = repeats(path, world, None)
        else:
            same = None
        if same is not None:
            return same
        self.submit(path, world)  # foreseen (already started), or not (another dist mode)
        return self.futures[path, world.name].result()

    def close(self):
        for future in self.futures.values():
            future.cancel()
        self.pool.shutdown(wait=True)


# A rough cost in seconds, to start the longest runs first: 07 runs its four memories
# through fifty turns (365 requests); 07b, its second part, replays only seven turns but
# runs the trim checker's bank and one more fifty-turn conversation.
EXPECTED_SECONDS = {"07_": 35.0, "07b_": 15.0}


def expected_seconds(path, world) -> float:
    """A rough cost, to start the longest runs first."""
    return next((s for start, s in EXPECTED_SECONDS.items() if path.stem.startswith(start)), 10.0)


@pytest.fixture(scope="module")
def runs(request):
    wanted = [(item.callspec.params["path"], item.callspec.params["world"])
              for item in request.session.items
              if getattr(item, "originalname", "") == "test_notebook_runs_top_to_bottom"
              and item.module is request.module]
    ahead = request.config.getoption("dist", "no") in SAME_WORKER
    server = request.getfixturevalue("other_model") if any(
        w.other_model for _, w in wanted) else None
    started = Runs(wanted if ahead else [], server, JOBS if ahead else 1)
    yield started
    started.close()


@pytest.mark.parametrize("world", WORLDS.values(), ids=lambda w: w.name)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=label)
def test_notebook_runs_top_to_bottom(path, world, runs):
    run = runs.get(path, world)
    if isinstance(run, Repeats):
        pytest.skip(f"{label(path)} in {world.name}: {run.why}")
    print(f"{label(path)} in {world.name}: {run.seconds:.1f} s, {run.cpu_seconds or 0:.1f} s CPU")
    problems = list(run.problems)
    if world.other_model and not runs.server.requests[api_key(path, world)]:
        problems.append(f"{label(path)}: never asked the other model (is LESSON_BACKEND read?)")
    assert not problems, (f"{path.name} in world {world.name} ({world.why}), "
                          f"{len(problems)} problem(s):\n" + "\n".join(problems))
