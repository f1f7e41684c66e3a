"""Self-checks for notebook 09, "Tool calling in production".

- `check_make_strict(make_strict)`: the learner's `make_strict(tool)`, a copy of a tool that
  strict mode accepts and that means the same (optional properties nullable, required ones
  not, enums kept), nested objects and array items included; the input left unchanged.
- `check_assemble(assemble)`: the learner's `assemble(chunks)`, which joins the chunks of a
  streamed reply (SDK `ChatCompletionChunk` objects) into the assistant message, a dict
  with `role`, `content` and, when the model called tools, `tool_calls`. It is judged
  against the non-streamed reply to the same request, and against hand-made streams for
  what the offline model never sends (text beside a call, two interleaved choices).
- `check_retries(call_with_retries)`: the learner's `call_with_retries(fn, attempts, base,
  sleep)`, judged with genuine SDK exceptions (429, 500, a timeout, a 400) and a recording
  `sleep`, so nothing really waits.

The streams and the errors come from offline clients of the checks' own, whichever model
the notebook uses, so each check is the same for everyone. Hints come in steps: a check
that fails the same way again shows the next one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lesson_lib.exercises import (
    Report,
    not_done,
    run_check,
    signature_problem,
    wrong_signature,
)
from lesson_lib.i18n import N_, _
from lesson_lib.protocol import ProtocolError, validate_messages

TITLE = N_("Exercise 2 · assemble a streamed reply")
CALL_ID = "call_check0000000000000000001"


def _offline_stream(question: str, tools: list | None) -> tuple[list, dict]:
    """(the chunks of a streamed reply, the same reply unstreamed as a dict)."""
    from lesson_lib.offline import MODEL_ID, offline_client  # noqa: PLC0415

    client = offline_client()
    request = {"model": MODEL_ID, "messages": [{"role": "user", "content": question}]}
    if tools:
        request["tools"] = tools
    chunks = list(client.chat.completions.create(
        **request, stream=True, stream_options={"include_usage": True}))
    whole = client.chat.completions.create(**request).choices[0].message
    return chunks, whole.model_dump(exclude_none=True)


def _chunks(*choices: tuple[int, dict]) -> list:
    """SDK chunk objects, one per (choice index, delta) given, then a last one per choice."""
    from openai.types.chat import ChatCompletionChunk  # noqa: PLC0415

    head = {"id": "chatcmpl-check", "object": "chat.completion.chunk", "created": 0,
            "model": "check"}
    out = [{**head, "choices": [{"index": i, "delta": d, "finish_reason": None}]}
           for i, d in choices]
    for i in sorted({i for i, _delta in choices}):
        out.append({**head, "choices": [{"index": i, "delta": {}, "finish_reason": "stop"}]})
    return [ChatCompletionChunk.model_validate(c) for c in out]


def _plain(message: Any) -> Any:
    """The learner's message as plain data (a dict, or an SDK object dumped)."""
    if hasattr(message, "model_dump"):
        return message.model_dump(exclude_none=True)
    return message


def _calls(message: dict) -> list:
    return [{"id": c.get("id"), "type": c.get("type"),
             "function": {"name": (c.get("function") or {}).get("name"),
                          "arguments": (c.get("function") or {}).get("arguments")}}
            for c in message.get("tool_calls") or []]


def _run(report: Report, assemble: Callable, chunks: list, what: str) -> dict | None:
    try:
        message = _plain(assemble(iter(chunks)))
    except IndexError:
        if any(not c.choices for c in chunks):
            report.expect(False, _("{what}: assemble reads every chunk without an "
                                   "IndexError").format(what=_(what)), (
                N_("with stream_options={'include_usage': True} the last chunk carries the "
                   "usage and `choices == []`: `chunk.choices[0]` fails on it"),
                N_("loop over `chunk.choices` (zero or more parts) instead of indexing it")))
            return None
        raise
    if isinstance(message, dict):
        return message
    report.expect(False, _("{what}: assemble returns a dict (got {type})").format(
        what=_(what), type=type(message).__name__), (
        N_("return the message as a dict: {'role': 'assistant', 'content': ..., "
           "'tool_calls': [...]}, the shape you append to messages"),))
    return None


def _check_text(report: Report, assemble: Callable) -> bool:
    chunks, whole = _offline_stream("My name is Xiaoming", None)
    message = _run(report, assemble, chunks, N_("a reply in words"))
    if message is None:
        return False
    if not _accepted(report, N_("a reply in words"), "My name is Xiaoming", message):
        return False
    return report.expect(
        message.get("role") == "assistant" and message.get("content") == whole["content"]
        and not message.get("tool_calls"),
        N_("a reply in words: role 'assistant', the content pieces joined in order, no "
           "tool_calls"),
        (N_("a reply in words comes as a delta with role, then deltas whose `content` is one "
            "piece each (the last chunk, and a usage chunk with `choices == []`, carry none)"),
         N_("join every `delta.content` that is not None, in arrival order; set "
            "'tool_calls' only when some delta carried tool_calls")))


def _check_calls(report: Report, assemble: Callable) -> bool:
    from lesson_lib.tools import get_tools_schema  # noqa: PLC0415

    ok = True
    for question, what in (("What's the weather in Chengdu?", N_("one tool call")),
                           ("What's the weather in Shanghai and Beijing?",
                            N_("two parallel tool calls"))):
        chunks, whole = _offline_stream(question, get_tools_schema())
        message = _run(report, assemble, chunks, what)
        if message is None:
            return False
        got, want = _calls(message), _calls(whole)
        ok &= report.expect(
            got == want and message.get("content") is None,
            _("{what}: the same tool_calls as the unstreamed reply (ids, names, "
              "arguments)").format(what=_(what)),
            (_("a call arrives in pieces keyed by `index`: the first piece has its id, type "
               "and name, the later ones only argument fragments (print the deltas of "
               "'{question}' to see them). Yours gave {got}, content {content} (no text "
               "came: None, as unstreamed)").format(
                 question=question, got=got[:2], content=repr(message.get('content'))),
             N_("keep one call per `index` (a dict of index → call works); set id, type and "
                "name when a piece has them, and add each `function.arguments` fragment to "
                "the end of that call's arguments"),
             N_("pieces after the first have id=None and function.name=None: do not let them "
                "overwrite what the first piece set")))
        if not ok or not _accepted(report, what, question, message):
            return False
    return True


def _accepted(report: Report, what: str, question: str, message: dict) -> bool:
    """The assembled message, sent back with a reply to each call, passes the API's rules."""
    replies = [{"role": "tool", "tool_call_id": c["id"], "content": "{}"}
               for c in _calls(message)]
    try:
        validate_messages([{"role": "user", "content": question}, message] + replies)
    except ProtocolError as error:
        return report.expect(False, _("{what}: the message is one the API accepts "
                                      "back").format(what=_(what)), (
            _("sent back, the API would answer: {error}").format(error=error.message),
            error.explanation or N_("compare your dict with the unstreamed reply's")))
    return True


def _check_text_and_call(report: Report, assemble: Callable) -> bool:
    call = {"index": 0, "id": CALL_ID, "type": "function",
            "function": {"name": "get_current_weather", "arguments": ""}}
    chunks = _chunks((0, {"role": "assistant", "content": ""}), (0, {"content": "Let me "}),
                     (0, {"content": "check."}), (0, {"tool_calls": [call]}),
                     (0, {"tool_calls": [{"index": 0, "function": {"arguments": '{"location"'}}]}),
                     (0, {"tool_calls": [{"index": 0, "function": {"arguments": ': "Chengdu"}'}}]}))
    message = _run(report, assemble, chunks, N_("words beside a call"))
    if message is None:
        return False
    return report.expect(
        message.get("content") == "Let me check." and _calls(message) == [{
            "id": CALL_ID, "type": "function", "function": {
                "name": "get_current_weather", "arguments": '{"location": "Chengdu"}'}}],
        N_("words beside a call (real models send both): content and tool_calls kept"),
        (N_("a real model may write a sentence and call a tool in the same reply: the content "
            "deltas come first, then the tool_calls deltas"),
         N_("collect content and tool_calls side by side; neither replaces the other")))


def _check_interleaved(report: Report, assemble: Callable) -> bool:
    first = {"index": 0, "id": CALL_ID, "type": "function",
             "function": {"name": "get_current_weather", "arguments": ""}}
    second = {"index": 1, "id": CALL_ID[:-1] + "2", "type": "function",
              "function": {"name": "get_current_time", "arguments": ""}}
    pieces = [(0, '{"location": '), (1, '{"timezone": '), (0, '"Chengdu"}'),
              (1, '"Asia/Tokyo"}')]
    chunks = _chunks((0, {"role": "assistant", "content": None}), (0, {"tool_calls": [first]}),
                     (0, {"tool_calls": [second]}), *[
                         (0, {"tool_calls": [{"index": i, "function": {"arguments": a}}]})
                         for i, a in pieces])
    message = _run(report, assemble, chunks, N_("two calls in turn"))
    if message is None:
        return False
    want = [{"id": CALL_ID, "type": "function", "function": {
                "name": "get_current_weather", "arguments": '{"location": "Chengdu"}'}},
            {"id": CALL_ID[:-1] + "2", "type": "function", "function": {
                "name": "get_current_time", "arguments": '{"timezone": "Asia/Tokyo"}'}}]
    return report.expect(
        _calls(message) == want,
        N_("two calls whose pieces take turns: each fragment goes to the call its `index` "
           "names"),
        (_("a fragment belongs to the call whose `index` it carries, not to the newest call: "
           "here the two calls' pieces alternate (yours gave {got})").format(
             got=_calls(message)),
         N_("look the call up by piece.index for every piece, not only for the first one")))


def _check_choices(report: Report, assemble: Callable) -> bool:
    chunks = _chunks((0, {"role": "assistant", "content": ""}), (1, {"role": "assistant", "content": ""}),
                     (0, {"content": "Cloudy"}), (1, {"content": "Sunny"}),
                     (0, {"content": ", 16°C."}), (1, {"content": ", 25°C."}))
    message = _run(report, assemble, chunks, N_("two choices"))
    if message is None:
        return False
    return report.expect(
        message.get("content") == "Cloudy, 16°C.",
        N_("with n=2 the chunks of two choices interleave: only choice 0 is assembled"),
        (_("each chunk's `choices[k].index` says which choice a delta belongs to; with n=2 "
           "they alternate (got content {content})").format(
             content=repr(message.get('content'))),
         N_("skip the parts whose `index` is not 0, and loop over `chunk.choices` instead of "
            "taking `chunk.choices[0]`")))


def check_assemble(assemble: Callable | None) -> bool:  # ... or None: not written yet
    """Judge the learner's `assemble(chunks) -> dict`."""
    if assemble is None or assemble is ...:
        return not_done(_(TITLE), _("write assemble(chunks) in the cell above, then run this "
                                    "check"))
    if wrong_signature(_(TITLE), signature_problem(assemble, "assemble(chunks)", [])):
        return False

    def body(report: Report) -> None:
        for step in (_check_text, _check_calls, _check_text_and_call, _check_interleaved,
                     _check_choices):
            if not step(report, assemble):
                return  # one thing at a time: the first that fails, with its hint

    return run_check(_(TITLE), body)


# ----------------------------------------------------------------- exercise 1: make_strict

STRICT_TITLE = N_("Exercise 1 · make a tool strict")


def booking_tool() -> dict:
    """A tool with nested objects and an array of objects, optional fields at each level."""
    return {"type": "function", "function": {
        "name": "book_table", "description": "Book a table at a restaurant.",
        "parameters": {"type": "object", "properties": {
            "restaurant": {"type": "string", "description": "Its name"},
            "guests": {"type": "object", "properties": {
                "adults": {"type": "integer"}, "children": {"type": "integer"}},
                "required": ["adults"]},
            "note": {"type": "string", "description": "A wish for the kitchen"},
            "dishes": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "spicy": {"type": "boolean"}},
                "required": ["name"]}}},
            "required": ["restaurant", "guests"]}}}


# (tool, arguments, should the strict schema accept them, what they show)
_WEATHER_CASES = [
    ({"location": "Chengdu", "unit": "fahrenheit"}, True, N_("a full call")),
    ({"location": "Chengdu", "unit": None}, True, N_("optional `unit` sent as null")),
    ({"location": None, "unit": None}, False, N_("required `location` sent as null")),
    ({"location": "Chengdu", "unit": "kelvin"}, False, N_("`unit` outside its enum")),
]
_BOOKING_CASES = [
    ({"restaurant": "Chen Mapo", "guests": {"adults": 2, "children": None}, "note": None,
      "dishes": [{"name": "mapo tofu", "spicy": None}]}, True,
     N_("optional fields inside `guests` and inside each dish sent as null")),
    ({"restaurant": "Chen Mapo", "guests": {"adults": None, "children": 1}, "note": None,
      "dishes": None}, False, N_("required `guests.adults` sent as null")),
]


def _strict_problem(tool: dict) -> str | None:
    from lesson_lib.protocol import validate_request  # noqa: PLC0415

    try:
        validate_request({"model": "check", "messages": [{"role": "user", "content": "hi"}],
                          "tools": [tool]})
    except ProtocolError as error:
        return error.message
    return None


def _check_strict_tool(report: Report, make_strict: Callable, original: dict,
                       cases: list) -> bool:
    import copy  # noqa: PLC0415

    import jsonschema  # noqa: PLC0415

    name = original["function"]["name"]
    before = copy.deepcopy(original)
    strict = make_strict(original)
    if not report.expect(original == before, _("{name}: the tool you were given is "
                                               "unchanged").format(name=name), (
            N_("make_strict changed the tool it was given: the caller's schema is not yours "
               "to edit (and a non-strict tool may be in use elsewhere)"),
            N_("work on copy.deepcopy(tool): dict(tool) copies only the outer dict, and the "
               "nested schemas are still shared"))):
        return False
    if not report.expect(isinstance(strict, dict) and isinstance(strict.get("function"), dict),
                         _("{name}: make_strict returns a tool dict").format(name=name),
                         (N_("return the whole tool, {'type': 'function', 'function': "
                             "{...}}"),)):
        return False
    if not report.expect(strict["function"].get("strict") is True,
                         _("{name}: `\"strict\": True` is set on the function").format(
                             name=name), (
                             N_("strict is a key of tool['function'], next to name and "
                                "parameters (not inside parameters)"),)):
        return False
    problem = _strict_problem(strict)
    if not report.expect(problem is None, _("{name}: the API accepts it as a strict "
                                            "tool").format(name=name), (
            _("the API answers: {problem}").format(problem=problem),
            N_("every object schema needs additionalProperties=False and all its properties "
               "in required, nested ones too: the objects inside properties and inside an "
               "array's items"),
            N_("a function that handles one schema and calls itself on each property and on "
               "items reaches them all"))):
        return False
    parameters = strict["function"]["parameters"]
    for arguments, accepted, what in cases:
        valid = jsonschema.Draft202012Validator(parameters).is_valid(arguments)
        if valid == accepted:
            continue
        if accepted:
            hints = (N_("an optional property must accept null: its type a union with "
                        "'null' (\"type\": [\"string\", \"null\"]), and, if it has an enum, "
                        "None among the enum's values (an enum allows only what it lists)"),
                     N_("strict calls carry every property, and null is how they say 'not "
                        "given'; do this for the optional properties of nested objects too"))
        elif "outside its enum" in what:
            hints = (N_("the strict schema must still refuse what the tool refused: keep "
                        "each property's enum (adding None for an optional one)"),)
        else:
            hints = (N_("only the optional properties become nullable: a required one must "
                        "still be given a real value"),
                     N_("look at the original `required` list of each object before you "
                        "replace it with all the properties"))
        report.expect(False, (_("{name}: {what} is accepted (the meaning of the schema is "
                                "kept)") if accepted else
                              _("{name}: {what} is refused (the meaning of the schema is "
                                "kept)")).format(name=name, what=_(what)), hints)
        return False
    return report.expect(True, _("{name}: same meaning: optional → may be null, required → "
                                 "a real value, enums kept").format(name=name))


def check_make_strict(make_strict: Callable | None) -> bool:  # ... or None: not written yet
    """Judge the learner's `make_strict(tool) -> dict`."""
    if make_strict is None or make_strict is ...:
        return not_done(_(STRICT_TITLE), _("write make_strict(tool) in the cell above, then "
                                           "run this check"))
    if wrong_signature(_(STRICT_TITLE), signature_problem(make_strict, "make_strict(tool)", {})):
        return False
    from lesson_lib.tools import WEATHER_TOOL  # noqa: PLC0415

    def body(report: Report) -> None:
        import copy  # noqa: PLC0415

        if _check_strict_tool(report, make_strict, copy.deepcopy(WEATHER_TOOL),
                              _WEATHER_CASES):
            _check_strict_tool(report, make_strict, booking_tool(), _BOOKING_CASES)

    return run_check(_(STRICT_TITLE), body)


# ----------------------------------------------------------------- exercise 3: call_with_retries

RETRY_TITLE = N_("Exercise 3 · retry with back-off")


def _real_errors() -> dict:
    """Genuine SDK exceptions, made by asking an offline client to fail."""
    from lesson_lib.offline import MODEL_ID, inject_fault, offline_client  # noqa: PLC0415

    errors = {}
    hello = [{"role": "user", "content": "hi"}]
    for kind, name in (("rate_limit", "429"), ("server_error", "500"), ("timeout", "timeout")):
        client = offline_client()
        inject_fault(client, kind)
        try:
            client.chat.completions.create(model=MODEL_ID, messages=hello)
        except Exception as error:  # the fault ordered above
            errors[name] = error
    try:
        offline_client().chat.completions.create(model=MODEL_ID, messages=[])
    except Exception as error:  # an empty message list: the API's 400
        errors["400"] = error
    return errors


class _Script:
    """A function that fails as scripted (errors), then answers; it counts its calls."""

    def __init__(self, *failures: BaseException):
        self.failures, self.calls = list(failures), 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "answered"


def _waits_ok(waits: list, base: float, count: int) -> bool:
    return len(waits) == count and all(
        isinstance(w, (int, float)) and base * 2 ** k <= w <= base * 2 ** k * 1.1 + 1e-9
        for k, w in enumerate(waits))


def _run_retries(learner: Callable, script: _Script, **options) -> tuple[Any, Any, list]:
    waits: list = []
    try:
        result, raised = learner(script, sleep=waits.append, **options), None
    except Exception as error:  # what the learner's function let through
        result, raised = None, error
    return result, raised, waits


def _check_retries(report: Report, learner: Callable) -> None:
    e = _real_errors()
    script = _Script(e["429"], e["500"])
    result, raised, waits = _run_retries(learner, script)
    if not report.expect(result == "answered" and script.calls == 3,
                         N_("a 429, then a 500, then an answer: the answer, on the third "
                            "call"), (
                             (_("got {result} after {calls} call(s), and {error} escaped: 429 "
                                "and 5xx pass with time, so they are retried") if raised else
                              _("got {result} after {calls} call(s): 429 and 5xx pass with "
                                "time, so they are retried")).format(
                                 result=repr(result), calls=script.calls,
                                 error=type(raised).__name__),
                             N_("catch openai.RateLimitError and openai.InternalServerError "
                                "(and openai.APIConnectionError), wait, and call fn() again"))):
        return
    waits_hint = (_("your waits: {waits}; with base=0.5 they should be between 0.5 and "
                    "0.55, then between 1.0 and 1.1: each wait doubles, and the jitter adds up "
                    "to 10% *of that wait*").format(waits=waits),
                  N_("wait base * 2 ** k * (1 + random.random() / 10) before retry k "
                     "(k = 0, 1, ...), through the sleep you were given"))
    if not report.expect(_waits_ok(waits, 0.5, 2),
                         N_("it waited 0.5 s, then 1 s (base·2^k, plus up to 10% of it)"),
                         waits_hint):
        return
    script = _Script(e["429"], e["429"], e["429"], e["429"])
    longer, raised, four = _run_retries(learner, script, attempts=5)
    if not report.expect(longer == "answered" and _waits_ok(four, 0.5, 4),
                         N_("attempts=5 and four 429s before the answer: it waits 0.5, 1, 2, "
                            "then 4 s (each wait doubles)"), (
            _("your waits: {waits} ({outcome}): back-off doubles each wait, base·2^k, so "
              "that a service that is down long gets longer and longer rests; adding base "
              "each time (0.5, 1, 1.5, 2) does not").format(
                waits=[round(w, 3) if isinstance(w, float) else w for w in four],
                outcome=repr(longer) if raised is None else _outcome(raised)),
            N_("wait base * 2 ** k before retry k (k = 0, 1, 2, ...), times "
               "(1 + random.random() / 10)"))):
        return
    again = _run_retries(learner, _Script(e["429"], e["500"]))[2]
    if not report.expect(again != waits, N_("the waits have jitter: two runs wait a little "
                                            "differently"), (
            _("two runs waited {first} and {second}: with no randomness, clients that failed "
              "together retry together, and fail together again").format(first=waits,
                                                                         second=again),
            N_("multiply each wait by (1 + random.random() / 10)"))):
        return
    script = _Script(e["timeout"])
    result, raised, waits = _run_retries(learner, script, base=0.1)
    if not report.expect(result == "answered", N_("a timeout is retried too"), (
            (_("got {result} and {error} escaped: openai.APITimeoutError is a kind of "
               "openai.APIConnectionError, which may pass") if raised else
             _("got {result}: openai.APITimeoutError is a kind of openai.APIConnectionError, "
               "which may pass")).format(result=repr(result), error=type(raised).__name__),)):
        return
    if not report.expect(_waits_ok(waits, 0.1, 1), N_("base=0.1 waits 0.1 s (plus up to "
                                                      "10%)"), (
            _("your wait: {waits}: `base` is the first wait, and the jitter is up to 10% of "
              "the wait (0.1 to 0.11 here), not of a second").format(waits=waits),)):
        return
    script = _Script(e["400"])
    result, raised, waits = _run_retries(learner, script)
    if not report.expect(raised is e["400"] and script.calls == 1 and not waits,
                         N_("a 400 is raised at once, unchanged, without waiting"), (
                             _("fn was called {calls} time(s), waits {waits}, and {outcome}: a "
                               "400 means the request is wrong, and no wait fixes it").format(
                                 calls=script.calls, waits=waits, outcome=_outcome(raised)),
                             N_("retry only the errors that may pass; let any other exception "
                                "go up as it is (a bare `raise`)"))):
        return
    script = _Script(e["429"], e["429"], e["429"], e["429"])
    result, raised, waits = _run_retries(learner, script, attempts=3)
    report.expect(raised is e["429"] and script.calls == 3 and _waits_ok(waits, 0.5, 2),
                  N_("attempts=3 and always 429: three calls, two waits, then the 429 itself"),
                  (_("fn was called {calls} time(s), waits {waits}, {outcome}").format(
                      calls=script.calls, waits=waits, outcome=_outcome(raised)),
                   N_("attempts counts every call, the first included; do not wait after "
                      "the last one; when none is left, raise the last error (do not "
                      "return None: the caller must know it failed)")))


def _outcome(raised: BaseException | None) -> str:
    if raised is None:
        return _("no exception was raised")
    return _("{error} came out").format(error=type(raised).__name__)


def check_retries(call_with_retries: Callable | None) -> bool:  # ... or None: not written yet
    """Judge the learner's `call_with_retries(fn, attempts=4, base=0.5, sleep=time.sleep)`."""
    if call_with_retries is None or call_with_retries is ...:
        return not_done(_(RETRY_TITLE), _("write call_with_retries in the cell above, then "
                                          "run this check"))
    if wrong_signature(_(RETRY_TITLE), signature_problem(
            call_with_retries, "call_with_retries(fn, attempts=4, base=0.5, sleep=time.sleep)",
            None, attempts=4, base=0.5, sleep=None)):
        return False
    return run_check(_(RETRY_TITLE), lambda report: _check_retries(report, call_with_retries))
