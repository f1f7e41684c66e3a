"""A served "other model" for the Run All tests: a stand-in that is not the offline one.

It understands what the offline teaching model understands (every request is answered
by `lesson_lib.offline.api.handle`), but it behaves like another provider's model:

- its id is OTHER_MODEL_ID (the offline id is not served here: the real 404);
- it words every text answer differently (JSON answers to a `response_format` excepted):
  another opening, its own phrasing of the offline model's sentences, and the sentences in
  another order. The facts it was given
  (names, places, numbers, times, error texts) are kept, and a question stays a question
  at the end, as a real model keeps them; a check for the offline wording fails;
- it never makes parallel calls: only the first tool call of a message is kept,
  whatever `parallel_tool_calls` says;
- it answers some tool-worthy questions without a tool: when `tool_choice` is absent
  or "auto" and no call was made yet in the turn, one request in three (by a hash of
  the latest user message) gets "I can't check that right now." instead of the call.
  With `tool_choice` "required" or a named function it always calls;
- `usage` is the offline model's; errors (4xx, 5xx) pass through unchanged, so a
  deliberate 400 raises the same `openai` exception class;
- `stream=True` gets the transformed completion as server-sent events.

    with serve_other_model() as server:       # 127.0.0.1, a free port, a background thread
        client = openai.OpenAI(base_url=server.base_url, api_key="anything")
        client.chat.completions.create(model=OTHER_MODEL_ID, messages=[...])

`server.environ()` gives the variables a notebook kernel needs to use it as a learner
uses a real provider: LESSON_BACKEND=openai, OPENAI_API_KEY, OPENAI_BASE_URL, LESSON_MODEL.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from collections import Counter
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lesson_lib.offline import MODEL_ID, api
from lesson_lib.offline.understand import language, text_of
from lesson_lib.protocol import ProtocolError
from lesson_lib.tokens import encoding_for

OTHER_MODEL_ID = "other-model-7b"
OTHER_EMBEDDING_MODEL_ID = "other-embed-512"  # its embedding model (the offline vectors)
OTHER_API_KEY = "other-model-key"  # any key works; this one is never a real secret
LOOPBACK = "127.0.0.1"
DECLINE_EVERY = 3  # one tool-worthy question in DECLINE_EVERY is answered without a tool
DECLINE = {"en": "I can't check that right now.", "zh": "我现在没法查这个。"}


# ----------------------------------------------------------------- the transformation

def stable_hash(text: str) -> int:
    """A hash that does not change between runs (PYTHONHASHSEED has no say)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def last_user_text(messages: list) -> str:
    for m in reversed(messages):
        if isinstance(m, Mapping) and m.get("role") == "user":
            return text_of(m)
    return ""


def called_in_turn(messages: list) -> bool:
    """Whether an assistant message after the latest user message made a tool call."""
    for m in reversed(messages):
        if not isinstance(m, Mapping):
            continue
        if m.get("role") == "user":
            return False
        if m.get("role") == "assistant" and m.get("tool_calls"):
            return True
    return False


def declines(body: Mapping) -> bool:
    """Whether this request's tool call is replaced by a text answer."""
    choice = body.get("tool_choice")
    if choice not in (None, "auto"):
        return False  # "required" or a named function: it must call
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    if called_in_turn(messages):
        return False  # once it started calling tools for a question, it carries on
    return stable_hash(last_user_text(messages)) % DECLINE_EVERY == 0


# Sentence by sentence, the offline model's templates (lesson_lib/offline/answer.py) in
# the other model's words. Every group a template fills is kept as it was.
EN_RULES: list[tuple[re.Pattern, str]] = [(re.compile(p), r) for p, r in [
    (r"^You told me your name is (?P<n>.+?)\.$", r"Your name is \g<n> — you mentioned it earlier."),
    (r"^You haven't told me your name\.$", "I don't know your name yet: you haven't mentioned it."),
    (r"^Nice to meet you, (?P<n>[^!]+)!$", r"Hi \g<n>, good to meet you!"),
    (r"^How can I help\?$", "What can I do for you?"),
    (r"^Hello, (?P<n>[^!]+)!$", r"Hi there, \g<n>!"),
    (r"^Hello!$", "Hi there!"),
    (r"^I'm the offline teaching model\.$", f"You're talking to {OTHER_MODEL_ID}."),
    (r"^You're welcome!$", "Glad I could help!"),
    (r"^It is (?P<t>.+) in (?P<z>\S+)\.$", r"In \g<z>, the local time is \g<t>."),
    (r"^It is (?P<t>.+)\.$", r"The time right now is \g<t>."),
    (r"^(?P<b>.+?) is (?P<w>\w+): (?P<v>[^,]+), against (?P<r>.+)\.$",
     r"Comparing them, \g<b> comes out \g<w> at \g<v> (versus \g<r>)."),
    (r"^After (?P<n>\d+ checks?): (?P<r>.+)$", r"It took \g<n>. \g<r>"),
    (r"^I couldn't get the (?P<t>[^:]+): (?P<e>.+)$", r"Sorry, the \g<t> lookup failed: \g<e>"),
    (r"^(?P<n>\w+) reported an error: (?P<e>.+)$", r"The tool \g<n> failed with: \g<e>"),
    (r"^Hint: (?P<h>.+)$", r"The tool suggests: \g<h>"),
    (r"^Which city would you like the (?P<t>.+) for\?$",
     r"For which city should I get the \g<t>?"),
    (r"^Which (?P<w>.+) would you like: (?P<o>.+)\?$", r"Please pick the \g<w>: \g<o>?"),
    (r"^What (?P<w>.+) should I use for (?P<n>\S+)\?$", r"Which \g<w> should \g<n> get?"),
    (r'^I could use (?P<l>.+) to answer this, but this request set tool_choice to "none", so '
     r"I may not call tools, and I have no live data of my own\.$",
     "Tools are off for this request (tool_choice is \"none\"), so I can't use \\g<l>, and "
     "I don't have live data myself."),
    (r"^I can't check the (?P<a>.+?): (?P<y>.+), and as an offline rule-based model I have no "
     r"live data\.$", r"I have no live data of my own, and I can't look up the \g<a>: \g<y>."),
    (r"^I'm the offline rule-based teaching model, a stand-in for a real LLM, and none of my "
     r"rules covers that\.$", "That is beyond what I can do here."),
    (r"^I can remember your name if (?P<r>.+)$", r"What I can do: remember your name if \g<r>"),
    (r"^Summary so far: (?P<r>.*)$", r"Notes on the conversation: \g<r>"),
    (r"^The user has not asked anything yet\.$", "No questions from the user yet."),
    (r"^The user asked: (?P<r>.+)$", r"Questions from the user: \g<r>"),
    (r"^Tool results: (?P<r>.+)$", r"From the tools: \g<r>"),
    (r"^(?P<n>\w+) returned (?P<k>\d+) items: (?P<r>.+)$", r"The tool \g<n> gave \g<k> items: \g<r>"),
    (r"^(?P<n>\w+) returned nothing\.$", r"The tool \g<n> gave back nothing."),
    (r"^(?P<n>\w+) returned:? (?P<r>.+)$", r"Output of \g<n>: \g<r>"),
    (r"^(?P<p>[A-Z][\w .'-]*?) (?:is|has) (?P<c>[a-z][^,:]*), (?P<r>.+)\.$",
     r"Current conditions in \g<p>: \g<c>, \g<r>."),
]]
ZH_RULES: list[tuple[re.Pattern, str]] = [(re.compile(p), r) for p, r in [
    (r"^你刚才说你叫(?P<n>.+?)。$", r"你叫\g<n>，这是你之前告诉我的。"),
    (r"^你没有告诉我你的名字。$", "我还不知道你的名字，你没有说过。"),
    (r"^你好(?P<n>[^！]*)！$", r"\g<n>你好，很高兴认识你！"),
    (r"^有什么可以帮你的？$", "需要我做点什么吗？"),
    (r"^不客气！$", "很高兴能帮上忙！"),
    (r"^(?P<z>[^ ：，]+?) ?现在是 (?P<t>.+)。$", r"\g<z>此刻：\g<t>。"),
    (r"^现在是 (?P<t>.+)。$", r"当前时间：\g<t>。"),
    (r"^我没能查到(?P<t>[^：]+)：(?P<e>.+)$", r"抱歉，\g<t>查询失败：\g<e>"),
    (r"^对话摘要：(?P<r>.*)$", r"对话要点：\g<r>"),
]]
EN_OPENINGS = ("Sure.", "Okay, here goes.", "Let me see.", "Right.")
ZH_OPENINGS = ("好的。", "嗯，我看看。", "明白。")
_END = {"en": ".!?", "zh": "。！？"}


def split_sentences(text: str, lang: str) -> list[str]:
    """Sentences, cut after . ! ? (English: before a space) or 。！？; text in quotes
    (“…”, "…", 「…」) is never cut, so a quoted question stays whole."""
    out, start, quote = [], 0, ""
    closing = {"“": "”", '"': '"', "「": "」"}
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
            continue
        if ch in closing:
            quote = closing[ch]
            continue
        if ch not in _END[lang]:
            continue
        nxt = text[i + 1:i + 2]
        if lang == "en" and nxt and not nxt.isspace():
            continue
        if nxt and nxt in _END[lang]:
            continue
        out.append(text[start:i + 1].strip())
        start = i + 1
    if text[start:].strip():
        out.append(text[start:].strip())
    return [s for s in out if s]


def paraphrase(sentence: str, lang: str) -> str:
    for pattern, replacement in EN_RULES if lang == "en" else ZH_RULES:
        if pattern.match(sentence):
            return pattern.sub(replacement, sentence, count=1)
    return sentence


def reword(text: str, lang: str = "en") -> str:
    """`text` as the other model says it: the same facts, other words, another order.
    Deterministic: the same text always gives the same rewording."""
    if not text or not text.strip():
        return text
    lines = text.split("\n")
    if len(lines) > 1:  # keep a layout as it is: reword line by line, no reordering
        body = "\n".join(" ".join(paraphrase(s, lang) for s in split_sentences(line, lang))
                         if line.strip() else line for line in lines)
    else:
        said = [paraphrase(s, lang) for s in split_sentences(text, lang)]
        for k in range(len(said) - 1, 0, -1):  # a hint stays with the error it is about
            if said[k].startswith(("The tool suggests:", "提示：")):
                said[k - 1:k + 1] = [said[k - 1] + ("" if lang == "zh" else " ") + said[k]]
        question = said.pop() if said and said[-1].endswith(("?", "？")) else None
        if len(said) > 1:  # the first sentence goes last; a closing question stays last
            said = said[1:] + said[:1]
        said += [question] if question else []
        body = ("" if lang == "zh" else " ").join(said)
    openings = ZH_OPENINGS if lang == "zh" else EN_OPENINGS
    opening = openings[stable_hash(text) % len(openings)]
    return opening + ("" if lang == "zh" else " ") + body


def cut_to(text: str, tokens: int) -> str:
    """`text` cut to `tokens` tokens (for a reply the offline model cut at max_tokens)."""
    encoding = encoding_for(MODEL_ID)
    ids = encoding.encode(text, disallowed_special=())
    return text if len(ids) <= tokens else encoding.decode(ids[:tokens])


def wants_json(body: Mapping) -> bool:
    """A JSON answer was asked for (response_format json_object or json_schema): a real
    model keeps its content valid JSON, so it is not reworded (its values may still be
    other than the offline model's)."""
    fmt = body.get("response_format")
    return isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema")


def transform(completion: dict, body: Mapping) -> dict:
    """The offline model's completion as the other model gives it."""
    out = copy.deepcopy(completion)
    out["model"] = OTHER_MODEL_ID
    lang = language(last_user_text(list(body.get("messages") or [])))
    decline = declines(body)
    for choice in out["choices"]:
        message = choice["message"]
        calls = message.get("tool_calls") or []
        if calls and decline:
            message.pop("tool_calls")
            message["content"] = DECLINE[lang]
            choice["finish_reason"] = "stop"
            continue
        if len(calls) > 1:
            message["tool_calls"] = calls[:1]
        text = message.get("content")
        if isinstance(text, str) and text and not wants_json(body):
            new = reword(text, lang)
            if choice["finish_reason"] == "length":  # cut where the offline reply was cut
                new = cut_to(new, len(encoding_for(MODEL_ID).encode(text,
                                                                     disallowed_special=())))
            message["content"] = new
    return out


# ----------------------------------------------------------------- one HTTP exchange

def model_not_found(model: Any) -> api.Reply:
    return api.error_reply(ProtocolError(  # the real 404's text, for any id but ours
        f"The model `{model}` does not exist or you do not have access to it.",
        code="model_not_found", status=404))


def answer(method: str, path: str, headers: Mapping[str, str], raw: bytes) -> api.Reply:
    """(status, headers, bytes or a list of SSE events) for one request."""
    route = path.split("?", 1)[0].rstrip("/")
    refused = api.handle("GET", "/v1/models", headers, b"")  # the offline key check: the 401
    if refused[0] != 200:
        return refused
    if method == "GET" and route in ("/v1/models", "/models"):
        return api.json_reply(200, {"object": "list", "data": [api.model_object(OTHER_MODEL_ID)]})
    if method == "GET" and route.startswith(("/v1/models/", "/models/")):
        wanted = route.rsplit("/", 1)[1]
        if wanted != OTHER_MODEL_ID:
            return model_not_found(wanted)
        return api.json_reply(200, api.model_object(OTHER_MODEL_ID))
    if method == "POST" and route == "/v1/embeddings":
        return embeddings(path, headers, raw)
    if not (method == "POST" and route == "/v1/chat/completions"):
        return api.handle(method, path, headers, raw)  # the offline 404 for an unknown URL
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        return api.handle(method, path, headers, raw)  # the real 400 for a bad body
    if body.get("model") and body["model"] != OTHER_MODEL_ID:
        return model_not_found(body["model"])
    asked = dict(body)
    if asked.get("model"):
        asked["model"] = MODEL_ID
    streamed = bool(asked.get("stream"))
    if streamed:  # ask for the whole completion, transform it, then stream that
        asked.pop("stream")
        stream_options = asked.pop("stream_options", None)
    status, head, payload = api.handle(method, path, headers, api.dumps(asked))
    if status != 200:
        return status, head, payload  # errors pass through unchanged
    completion = transform(json.loads(payload), body)
    if streamed:
        include_usage = isinstance(stream_options, Mapping) and \
            bool(stream_options.get("include_usage"))
        events = api.sse_events(completion, include_usage)
        return 200, {**api.SSE_HEADERS, "x-request-id": head.get("x-request-id", "")}, events
    return api.json_reply(200, completion)


def embeddings(path: str, headers: Mapping[str, str], raw: bytes) -> api.Reply:
    """POST /v1/embeddings for OTHER_EMBEDDING_MODEL_ID (the offline vectors, as a provider
    serves its own embedding model); the real 404 for any other model."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict) or not body.get("model"):
        return api.handle("POST", path, headers, raw)  # the real 400
    if body["model"] != OTHER_EMBEDDING_MODEL_ID:
        return model_not_found(body["model"])
    status, head, payload = api.handle("POST", path, headers,
                                       api.dumps({**body, "model": MODEL_ID}))
    if status != 200:
        return status, head, payload
    return api.json_reply(200, {**json.loads(payload), "model": OTHER_EMBEDDING_MODEL_ID})


# ----------------------------------------------------------------- the server

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK expects
    # The head and the body go out in two writes: with Nagle's algorithm the body waits for
    # the client's delayed ACK of the head, some 40 ms a request (notebook 11 makes 550).
    disable_nagle_algorithm = True
    server: OtherModelServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        pass  # quiet: the test's output is about the notebooks

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.server.lock:  # one request at a time, as the offline server answers
            key = headers.get("authorization", "").removeprefix("Bearer ").strip()
            self.server.requests[key] += 1
            status, head, payload = answer(self.command, self.path, headers, raw)
            if not isinstance(payload, bytes):
                payload = list(payload)
        self.send_response(status)
        for key, value in head.items():
            self.send_header(key, value)
        if isinstance(payload, bytes):
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        else:
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for event in payload:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = _serve


class OtherModelServer(ThreadingHTTPServer):
    daemon_threads = True  # a kept-alive connection never holds up the end of a test run

    def __init__(self, port: int = 0):
        super().__init__((LOOPBACK, port), _Handler)
        self.lock = threading.Lock()
        self.requests: Counter[str] = Counter()  # requests answered, by API key
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.server_address[1]}/v1"

    def environ(self, api_key: str = OTHER_API_KEY) -> dict[str, str]:
        """The variables that make lesson_lib (llm.py) use this model, as a real provider.
        Give each run its own `api_key` to count its requests (`requests[api_key]`)."""
        return {"LESSON_BACKEND": "openai", "OPENAI_API_KEY": api_key,
                "OPENAI_BASE_URL": self.base_url, "LESSON_MODEL": OTHER_MODEL_ID,
                "LESSON_EMBEDDING_MODEL": OTHER_EMBEDDING_MODEL_ID}

    def start(self) -> OtherModelServer:
        self._thread = threading.Thread(target=self.serve_forever, name="other-model",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        self.server_close()

    def __enter__(self) -> OtherModelServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve_other_model(port: int = 0) -> OtherModelServer:
    """The other model, serving on 127.0.0.1 (a free port by default) in a background thread."""
    return OtherModelServer(port).start()
