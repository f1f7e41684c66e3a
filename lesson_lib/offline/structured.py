"""Structured outputs and strict tools: the offline model's answer, made to fit a schema.

The real API constrains its decoding: with `response_format` `json_schema` and
`strict: true` the content always parses and is valid against the schema, and a function
with `"strict": true` always gets arguments valid against its parameters. The rule-based
brain writes prose and fills arguments as well as it can; `constrain(body, answer)`
then does what constrained decoding does, after the fact:

- `json_schema` (strict or not): the content becomes a JSON instance of the schema, each
  value read from the conversation (`Filler.find`), else a typed blank (`Filler.blank`).
  It is checked with `jsonschema` (formats included) and repaired until it is valid;
- `json_object`: the content becomes a JSON object, with the keys a message asks for
  ("a JSON with fields name and age", "with `setup` and `punchline` keys", "包含 name 和
  age 字段", an example object in the system prompt), else {"answer": the brain's reply};
- a strict function's call keeps the arguments that are valid, fills the missing or
  wrong ones the same way and drops unknown keys; a call that still fails is not sent.
  Non-strict functions are left as the brain wrote them. Before that, `brain_view`
  shows the brain strict schemas simplified, so it asks back only for what nothing fills.

A reply that already fits (the brain's text is valid JSON for the format) is kept.

Where the values come from, in order: JSON in tool results and user messages (a key of
the same name: "temperature" from {"temperature": 16}); "key: value" in the user's words;
then by what the key means (its name, description and format): places, dates and times,
people's names, an event's name ("going to a science fair"), numbers near their word
("25 years old", "$30"), languages, e-mail addresses, enum values the text names, and the
brain's own reply for answer-like keys ("answer", "summary", "explanation").

Blanks, when nothing was found: null where the schema allows it, then the schema's
`default`, `const`, the first `enum` value, an empty string (a sample for a `format` or
`pattern`: today's date for "date"), 0 within minimum/maximum, false, an empty list (or
`minItems` blanks), and an object of blanks. A key the schema does not require is left
out instead (non-strict schemas only: strict ones require every key).

The user's words are read with understand.py's helpers, read-only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

import jsonschema
import referencing.exceptions

from lesson_lib import clock
from lesson_lib.offline import brain
from lesson_lib.offline import understand as u

MISSING: Any = object()   # "nothing found": the caller falls back to a blank
MAX_DEPTH = 8             # recursive schemas ($ref to itself) stop here
MAX_REPAIRS = 50          # validation errors fixed one at a time, at most this many


@dataclass
class Source:
    """What a structured answer is read from: the conversation, and the brain's reply."""
    texts: list[str]                  # user messages, the latest first
    said: str = ""                    # the brain's reply (for "answer"-like keys)
    data: list[Mapping] = field(default_factory=list)  # JSON objects, latest first
    instructions: str = ""            # system/developer messages, then the user's as
    # written (JSON included): where JSON mode's keys are asked for
    today: date = field(default_factory=lambda: clock.now().date())
    used: set = field(default_factory=set)  # names and numbers already placed


# ------------------------------------------------------------------ the entry point

def reply(body: Mapping) -> dict:
    """The brain's reply to a (validated) Chat Completions body, made to honour its
    `response_format` and strict tools: what the API routes answer with. The brain reads
    brain_view(body) and compares its planned calls with those already made as strict
    tools send them (as_sent), so a call that came back filled is not made again."""
    with brain.sent_as(as_sent(body)):
        return constrain(body, brain.reply(brain_view(body)))


def as_sent(body: Mapping):
    """`fit(name, arguments)`: a call's arguments as strict_call sends them, read from the
    request up to its latest user message (what the calls of this turn were filled from,
    before any result came back); None when no tool is strict."""
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    if not any(map(is_strict, tools)):
        return None
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    source = source_of({**body, "messages": messages[:last + 1]}, "")
    fitted: dict[str, dict] = {}

    def fit(name: str, arguments: dict) -> dict:
        key = name + "\0" + json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        if key not in fitted:
            call = {"function": {"name": name, "arguments": json.dumps(arguments)}}
            made = strict_call(call, body, source)
            fitted[key] = json.loads(made["function"]["arguments"]) if made else arguments
        return fitted[key]

    return fit


def constrain(body: Mapping, answer: dict) -> dict:
    """`answer` (brain.reply's) made to honour `response_format` and strict tools.
    Requests that use neither get `answer` back untouched, at no cost."""
    message = answer["message"]
    if message.get("tool_calls"):  # a format constrains the content only
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        return strict_calls(body, answer) if any(map(is_strict, tools)) else answer
    fmt = body.get("response_format")
    fmt = fmt if isinstance(fmt, Mapping) else {}
    if fmt.get("type") not in ("json_object", "json_schema") or \
            already_fits(fmt, message.get("content")):
        return answer
    source = source_of(body, message.get("content") or "")
    if fmt["type"] == "json_object":
        content = json_object(source)
    else:
        spec = fmt.get("json_schema") or {}
        content = schema_instance(spec.get("schema") or {"type": "object", "properties": {}},
                                  source, strict=spec.get("strict") is True,
                                  entity=str(spec.get("name") or ""))
    return {**answer, "message": {**message, "content": dumps(content)}}


def strict_calls(body: Mapping, answer: dict) -> dict:
    """The reply's calls, each strict one made valid (see strict_call); when none can be
    sent, a text reply that says so instead."""
    source, made = source_of(body, ""), answer["message"]["tool_calls"]
    calls = [c for c in (strict_call(call, body, source) for call in made) if c is not None]
    if not calls:  # every call was unusable: say so rather than send an invalid one
        names = ", ".join(dict.fromkeys(c["function"]["name"] for c in made))
        return {"message": {"role": "assistant", "content": cannot_call(names, source)},
                "finish_reason": "stop"}
    return {**answer, "message": {**answer["message"], "tool_calls": calls}}


def cannot_call(names: str, source: Source) -> str:
    """The reply when no call could be made valid against its strict schema."""
    if u.language(source.texts[0]) == "zh":
        return f"我无法让 {names} 的参数符合它的严格（strict）模式，所以没有调用它。"
    return (f"I could not fill the arguments of {names} so that they fit its strict schema, "
            "so I did not call it.")


def already_fits(fmt: Mapping, content: Any) -> bool:
    """Whether the brain's own text is already what the format asks for (then it is kept)."""
    if fmt.get("type") not in ("json_object", "json_schema") or not isinstance(content, str):
        return False
    try:
        value = json.loads(content)
    except ValueError:
        return False
    if fmt["type"] == "json_object":
        return isinstance(value, dict)
    schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
    return validator_for(schema).is_valid(value)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def source_of(body: Mapping, said: str) -> Source:
    """The user's words (latest first), JSON found in tool results and user messages,
    the system prompt and the brain's reply."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    texts = [plain_words(u.tidy(u.text_of(m))) for m in reversed(messages)
             if m.get("role") == "user"]
    data = []
    for m in reversed(messages):
        if m.get("role") in ("tool", "function", "user"):  # data, not schemas of it
            data += [o for o in objects_in(u.text_of(m)) if not is_schema(o)]
    rules = "\n".join([u.text_of(m) for m in messages if m.get("role") in ("system", "developer")]
                      + [u.tidy(u.text_of(m)) for m in reversed(messages)
                         if m.get("role") == "user"])
    return Source([t for t in texts if t.strip()] or [""], said, data, rules)


def objects_in(text: str) -> list[Mapping]:
    """The JSON objects in `text`: the whole of it, or each {...} inside it that parses."""
    whole = u.read_result(text)
    if isinstance(whole, Mapping):
        return [whole]
    found, decoder = [], json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text or "")):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, Mapping) and value:
            found.append(value)
    return found


# ------------------------------------------------------------------ schema instances

def schema_instance(schema: Mapping, source: Source, strict: bool, entity: str = "") -> Any:
    """A value valid against `schema` (an object, usually), filled from `source`."""
    filler = Filler(schema, source, strict)
    value = filler.find(schema, "", (entity, str(schema.get("title") or "")), 0)
    if value is MISSING:
        value = filler.blank(schema, 0)
    return filler.repaired(value)


class Filler:
    """Fills one schema from one source; `root` resolves "#/$defs/..." references."""

    def __init__(self, root: Mapping, source: Source, strict: bool):
        self.root, self.source, self.strict = root, source, strict
        self.validator = validator_for(root)

    def resolve(self, schema: Any) -> Mapping:
        """`schema` with its $ref followed (local references only)."""
        seen = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 20:
            target: Any = self.root
            for part in schema["$ref"].removeprefix("#").strip("/").split("/"):
                if part:
                    target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) \
                        if isinstance(target, Mapping) else {}
            extra = {k: v for k, v in schema.items() if k != "$ref"}
            schema, seen = {**target, **extra}, seen + 1
        return schema if isinstance(schema, Mapping) else {}

    # ---- values read from the source

    def find(self, schema: Any, key: str, entity: tuple, depth: int) -> Any:
        """The value the source gives `key`, valid for `schema`, or MISSING."""
        schema = self.resolve(schema)
        if depth > MAX_DEPTH:
            return MISSING
        if "const" in schema:
            return schema["const"]
        branches = schema.get("anyOf") or schema.get("oneOf")
        if branches:
            for branch in branches:
                if types_of(self.resolve(branch)) != ["null"]:
                    value = self.find(branch, key, entity, depth)
                    if value is not MISSING and self.fits(branch, value):
                        return value
            return MISSING
        if "enum" in schema:
            return pick_enum(schema["enum"], key, self.source)
        from_data = self.from_data(schema, key)
        if from_data is not MISSING:
            return from_data
        for kind in types_of(schema):
            value = self.find_typed(kind, schema, key, entity, depth)
            if value is not MISSING:
                return value
        return MISSING

    def find_typed(self, kind: str, schema: Mapping, key: str, entity: tuple, depth: int) -> Any:
        if kind == "object":
            return self.find_object(schema, key, entity, depth)
        if kind == "array":
            return self.find_list(schema, key, entity, depth)
        if kind == "string":
            return find_string(schema, key, entity, self.source)
        if kind in ("number", "integer"):
            return find_number(schema, key, self.source, kind == "integer")
        if kind == "boolean":
            return find_boolean(key, self.source)
        return MISSING

    def find_object(self, schema: Mapping, key: str, entity: tuple, depth: int) -> Any:
        """An object of the values found for its keys (blanks for the required ones that
        were not), or MISSING when none was found."""
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        inner = (key, str(schema.get("title") or ""), *entity,
                 *(p for p in properties if set(u.split_name(p)) & PERSON_KEYS))
        out, found = {}, False
        for name, sub in properties.items():
            value = self.find(sub, name, inner, depth + 1)
            if value is MISSING:
                if name not in required and not self.strict:
                    continue
                value = self.blank(sub, depth + 1)
            else:
                found = True
            out[name] = value
        return out if found else MISSING

    def find_list(self, schema: Mapping, key: str, entity: tuple, depth: int) -> Any:
        """Several values for one key: names, places, languages, numbers, a written list;
        objects one per name found when their schema has a name-like key."""
        items = self.resolve(schema.get("items") or {})
        kinds = types_of(items)
        if "enum" in items:
            values = [v for v in items["enum"] if mentions(self.source.texts[0], str(v))]
        elif "object" in kinds:
            values = self.objects_for_names(items, key, entity, depth)
        elif kinds and kinds[0] in ("number", "integer"):
            values = [as_number(n, kinds[0] == "integer") for n in
                      u.numbers_in(self.source.texts[0])]
        else:
            values = strings_for(key, self.source)
        values = [v for v in values if self.fits(items, v)] if items else values
        low, high = schema.get("minItems") or 0, schema.get("maxItems")
        values = values[:high] if isinstance(high, int) else values
        if not values:
            return MISSING
        return values + [self.blank(items, depth + 1) for _ in range(low - len(values))]

    def objects_for_names(self, items: Mapping, key: str, entity: tuple, depth: int) -> list:
        """[{name: "Alice", ...}, {name: "Bob", ...}] for a list of people."""
        properties = items.get("properties") or {}
        named = next((k for k in properties if role_of(k, properties[k]) in ("person", "name")),
                     None)
        if named is None:
            return []
        out = []
        for person in names_in(self.source.texts[0]):
            one = {k: (person if k == named else self.blank(s, depth + 1))
                   for k, s in properties.items()}
            out.append(one)
        return out

    def from_data(self, schema: Mapping, key: str) -> Any:
        """A value under the same key (or a synonym) in JSON the conversation holds."""
        if not key:
            return MISSING
        wanted = {normal(k) for k in (key, *SYNONYMS.get(normal(key), ()))}
        for data in self.source.data:
            for found_key, value in flat_items(data):
                if normal(found_key) in wanted:
                    value = coerce(value, schema)
                    if value is not MISSING and self.fits(schema, value):
                        return value
        return MISSING

    # ---- blanks

    def blank(self, schema: Any, depth: int) -> Any:
        """The typed best-effort value when nothing was found (see the module's doc)."""
        schema = self.resolve(schema)
        branches = schema.get("anyOf") or schema.get("oneOf")
        kinds = types_of(schema)
        if "null" in kinds or any(types_of(self.resolve(b)) == ["null"] for b in branches or []):
            return None
        if "default" in schema and self.fits(schema, schema["default"]):
            return schema["default"]
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        if branches:
            return self.blank(branches[0], depth)
        if depth > MAX_DEPTH:
            return None
        kind = kinds[0] if kinds else "string"
        if kind == "object":
            properties = schema.get("properties") or {}
            required = set(schema.get("required") or [])
            return {k: self.blank(s, depth + 1) for k, s in properties.items()
                    if k in required or self.strict}
        if kind == "array":
            items = schema.get("items") or {}
            return [self.blank(items, depth + 1) for _ in range(schema.get("minItems") or 0)]
        return BLANKS.get(kind, lambda s, today: None)(schema, self.source.today)

    # ---- validity

    def fits(self, schema: Any, value: Any) -> bool:
        """Whether `value` is valid against `schema` (a part of the root schema)."""
        sub = {**self.resolve(schema)}
        for group in ("$defs", "definitions"):
            if group in self.root:
                sub.setdefault(group, self.root[group])
        try:
            return validator_for(sub).is_valid(value)
        except (jsonschema.SchemaError, referencing.exceptions.Unresolvable, ValueError):
            return False  # a part that cannot be checked on its own fits nothing

    def repaired(self, value: Any) -> Any:
        """`value` with each invalid part replaced by its blank, until it is valid. (The
        one thing that may stay invalid: a string whose `pattern` pattern_sample cannot
        satisfy, such as a look-behind; a strict call is then not sent.)"""
        for _ in range(MAX_REPAIRS):
            error = next(iter(sorted(self.validator.iter_errors(value),
                                     key=lambda e: -len(e.absolute_path))), None)
            if error is None:
                return value
            value = self.fix(value, list(error.absolute_path), error)
        return value

    def fix(self, value: Any, path: list, error: jsonschema.ValidationError) -> Any:
        """`value` with the part at `path` replaced (or, for an unknown key, removed)."""
        if error.validator == "additionalProperties" and isinstance(value, Mapping) and not path:
            allowed = set(error.schema.get("properties") or {})
            return {k: v for k, v in value.items() if k in allowed}
        if not path:
            blank = self.blank(error.schema, 0)
            if blank == value:  # a blank that does not fit (a pattern): the first sample
                blank = sample(error.schema, self.source.today)
            return blank
        head, rest = path[0], path[1:]
        copy = dict(value) if isinstance(value, Mapping) else list(value)
        copy[head] = self.fix(copy[head], rest, error)
        return copy


def validator_for(schema: Mapping) -> jsonschema.protocols.Validator:
    """A validator of `schema` that checks formats too (cached: lessons send the same
    schemas on every call, and the parts of one schema are checked many times)."""
    try:
        return _validator(json.dumps(schema, sort_keys=True))
    except TypeError:  # not JSON (a Python caller's schema): uncached
        return _new_validator(schema)


@lru_cache(maxsize=512)
def _validator(key: str) -> jsonschema.protocols.Validator:
    return _new_validator(json.loads(key))


def _new_validator(schema: Mapping) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def types_of(schema: Mapping) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    if isinstance(kind, str):
        return [kind]
    if "properties" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    return []


# ------------------------------------------------------------------ blanks of each type

def blank_string(schema: Mapping, today: date) -> str:
    text = FORMAT_SAMPLES.get(schema.get("format"), lambda d: "")(today)
    if schema.get("pattern") and not re.search(schema["pattern"], text):
        text = pattern_sample(schema["pattern"]) or text
    low = schema.get("minLength") or 0
    return text + "?" * max(0, low - len(text))


def blank_number(schema: Mapping, today: date) -> int | float:
    return clamp(0, schema, schema.get("type") == "integer")


BLANKS = {"string": blank_string, "number": blank_number, "integer": blank_number,
          "boolean": lambda s, d: False, "null": lambda s, d: None}
FORMAT_SAMPLES = {  # the formats strict mode supports, each with a valid sample
    "date": lambda d: d.isoformat(), "date-time": lambda d: f"{d.isoformat()}T00:00:00Z",
    "time": lambda d: "00:00:00Z", "duration": lambda d: "P0D",
    "email": lambda d: "unknown@example.com", "hostname": lambda d: "example.com",
    "ipv4": lambda d: "0.0.0.0", "ipv6": lambda d: "::",
    "uuid": lambda d: "00000000-0000-0000-0000-000000000000"}


def sample(schema: Mapping, today: date) -> Any:
    kinds = types_of(schema) or ["string"]
    return BLANKS.get(kinds[0], lambda s, d: None)(schema, today)


def pattern_sample(pattern: str) -> str | None:
    """A short string matching a regular expression (the usual constructs), or None."""
    try:
        import re._parser as sre  # noqa: PLC0415  (Python 3.11+)
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as sre  # noqa: PLC0415
    try:
        text = _sample_of(sre.parse(pattern))
    except (re.error, ValueError, KeyError, TypeError, IndexError):
        return None
    return text if re.search(pattern, text) else None


def _sample_of(parsed: Any) -> str:
    out: list[str] = []
    for op, arg in parsed:
        name = getattr(op, "name", str(op))
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_sample_in(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, item = arg
            out.append(_sample_of(item) * low)
        elif name == "SUBPATTERN":
            out.append(_sample_of(arg[-1]))
        elif name == "BRANCH":
            out.append(_sample_of(arg[1][0]))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise ValueError(f"cannot sample {name}")
    return "".join(out)


def _sample_in(items: list) -> str:
    for op, arg in items:
        name = getattr(op, "name", str(op))
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            return chr(arg[0])
        if name == "CATEGORY":
            return {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " "}.get(
                getattr(arg, "name", str(arg)), "a")
    raise ValueError("cannot sample this character set")


def clamp(number: float, schema: Mapping, integer: bool) -> int | float:
    """`number` moved inside the schema's minimum/maximum (exclusive ones too)."""
    step = 1 if integer else 0.5
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("exclusiveMinimum") is not None:
        low = schema["exclusiveMinimum"] + step
    if schema.get("exclusiveMaximum") is not None:
        high = schema["exclusiveMaximum"] - step
    if low is not None and number < low:
        number = low
    if high is not None and number > high:
        number = high
    return as_number(number, integer)


def as_number(value: float, integer: bool) -> int | float:
    if integer or float(value).is_integer():
        return int(round(value))
    return value


def coerce(value: Any, schema: Mapping) -> Any:
    """A value from JSON data in the schema's type, when it converts; else MISSING."""
    kinds = types_of(schema) or ["string", "number", "integer", "boolean", "array", "object"]
    if value is None:
        return None if "null" in kinds else MISSING
    if isinstance(value, bool):
        return value if "boolean" in kinds else MISSING
    if isinstance(value, (int, float)):
        if "integer" in kinds and float(value).is_integer():
            return int(value)
        if "number" in kinds:
            return value
        return str(value) if "string" in kinds else MISSING
    if isinstance(value, str):
        if "string" in kinds:
            return value
        numbers = u.numbers_in(value)
        if numbers and {"number", "integer"} & set(kinds):
            return as_number(numbers[0], "number" not in kinds)
        return MISSING
    if isinstance(value, list) and "array" in kinds:
        return value
    if isinstance(value, Mapping) and "object" in kinds:
        return dict(value)
    return MISSING


# ------------------------------------------------------------------ what a key means

ROLE_WORDS = {  # role: the words of a key's name that give it (stemmed)
    "answer": {"answer", "response", "reply", "message", "content", "text", "output",
               "result", "explanation", "summary", "reasoning", "comment", "final"},
    "date": {"date", "day", "when", "deadline", "birthday", "dob", "due", "start", "end"},
    "time": {"time", "hour", "clock"},
    "place": {"location", "place", "city", "town", "where", "address", "venue", "country",
              "region", "destination", "origin"},
    "language": {"language", "lang"},
    "email": {"email", "mail"},
    "url": {"url", "link", "website", "site", "homepage"},
    "phone": {"phone", "telephone", "mobile", "tel"},
    "person": {"person", "author", "organizer", "organiser", "host", "speaker", "owner",
               "user", "customer", "sender", "recipient", "who", "contact", "participant",
               "attendee", "people", "guest", "member", "friend", "student", "player",
               "firstname", "lastname", "fullname", "username", "traveller", "traveler",
               "passenger", "companion", "visitor"},
    "name": {"name", "title", "event", "topic", "subject", "activity", "occasion", "what",
             "item", "product", "task"},
}
PERSON_ENTITIES = {"person", "people", "user", "contact", "author", "customer", "employee",
                   "student", "member", "friend", "participant", "attendee", "guest",
                   "profile", "character", "player", "speaker", "organizer", "organiser"}
PERSON_KEYS = {"age", "email", "phone", "gender", "birthday", "occupation", "job"}  # siblings
# that make an object's "name" a person's
SYNONYMS = {"temperature": ("temp",), "temp": ("temperature",),
            "location": ("city", "place"), "city": ("location", "place"),
            "place": ("location", "city"), "condition": ("weather", "description"),
            "unit": ("units",), "units": ("unit",)}


def normal(key: str) -> str:
    return "".join(u.split_name(str(key)))


def key_words(key: str) -> set[str]:
    """The stemmed words of a key's name: "start_times" → {"start", "time"}."""
    return {u.stem(w) for w in u.split_name(key)}


def role_of(key: str, schema: Mapping) -> str:
    """What a string key holds: answer, date, time, place, language, email, url, phone,
    person, name; "" when its name says nothing."""
    fmt = schema.get("format") if isinstance(schema, Mapping) else None
    if fmt in ("date", "date-time"):
        return "date"
    if fmt in ("time", "email"):
        return fmt
    named = key_words(key) | set(u.split_name(key))
    for role, words in ROLE_WORDS.items():
        if named & words:
            return role
    return ""


def is_person_entity(entity: tuple) -> bool:
    named = {u.stem(w) for part in entity for w in u.split_name(str(part))}
    return bool(named & {u.stem(w) for w in PERSON_ENTITIES | PERSON_KEYS})


# ------------------------------------------------------------------ strings

def find_string(schema: Mapping, key: str, entity: tuple, source: Source) -> Any:
    """A string for `key` from the user's words (see role_of), or MISSING."""
    role = role_of(key, schema)
    if role == "answer":
        return source.said or MISSING
    for text in source.texts:
        said = said_value(key, text) if role not in ("date", "time") else None
        value = said or by_role(role, schema, key, entity, text, source)
        if value and (not schema.get("pattern") or re.search(schema["pattern"], value)):
            return value
        value = matching(schema.get("pattern"), text)
        if value:
            return value
    return MISSING


def matching(pattern: str | None, text: str) -> str | None:
    """The first piece of `text` a string `pattern` accepts: "ABC-12" for [A-Z]{3}-[0-9]{2}."""
    if not pattern:
        return None
    try:
        inner = re.compile(pattern.removeprefix("^").removesuffix("$"))
    except re.error:
        return None
    for found in inner.finditer(text):
        if found.group(0) and re.search(pattern, found.group(0)):
            return found.group(0)
    return None


def by_role(role: str, schema: Mapping, key: str, entity: tuple, text: str,
            source: Source) -> str | None:
    if role == "date":
        return date_in(text, schema.get("format"), source.today)
    if role == "time":
        return time_in(text, schema.get("format") == "time")
    if role == "place":
        places = [t.value for t in u.targets_in(text)]
        return places[0] if places else u.unknown_place(text, NOT_PLACES)
    if role == "language":
        return next(iter(u.languages_in(text)), None)
    if role in ("email", "url", "phone"):
        found = re.search(PATTERNS[role], text)
        return found.group(0) if found else None
    if role == "person" or (role == "name" and "name" in u.split_name(key)
                            and is_person_entity(entity)):
        return person_in(text, source)
    if role == "name":
        return u.quoted_in(text) or phrase_in(text) or None
    return None


NOT_PLACES = {"celsius", "fahrenheit", "kelvin", "english", "chinese", "french", "japanese",
              "german", "spanish", "utc", "gmt", "json"}  # capitalised after "in", not places
PATTERNS = {"email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
            "url": r"https?://[^\s,;)\"']+|\bwww\.[^\s,;)\"']+",
            "phone": r"\+?\d[\d\s().-]{6,}\d"}


def said_value(key: str, text: str) -> str | None:
    """The value the text gives a key in so many words: "name: Alice", "age is 30"."""
    words = u.split_name(key)
    if not words:
        return None
    name = r"[\s_-]*".join(map(re.escape, words))
    found = re.search(rf"(?i)\b{name}s?\b\s*(?:is|are|was|=|:|：)\s*\"?([^,;\n\"]+)", text)
    if not found:
        return None
    value = re.split(r"(?<!\d)\.(?!\d)|\s+and\s+", found.group(1))[0].strip(" .!?'\"")
    return value or None


def person_in(text: str, source: Source) -> str | None:
    """The first person's name not used yet: "my name is ..." first, else a capitalised one."""
    for name in [u.name_in(text), *names_in(text), *chinese_names_in(text)]:
        if name and name not in source.used:
            source.used.add(name)
            return name
    return None


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)*)")
_NOT_PEOPLE = {"i", "i'm", "the", "a", "an", "and", "or", "but", "my", "our", "we", "they",
               "he", "she", "it", "this", "that", "these", "what", "who", "when", "where",
               "why", "how", "which", "please", "extract", "find", "get", "tell", "give",
               "list", "parse", "return", "make", "create", "add", "show", "write", "is",
               "are", "can", "could", "would", "will", "do", "does", "hi", "hello", "hey",
               "thanks", "today", "tomorrow", "tonight", "yesterday", "json", "yes", "no",
               "next", "last", "on", "in", "at", "for", "from", "to", "with", "let", "let's",
               "dear", "mr", "mrs", "ms", "dr", "event", "meeting", "answer", "reply"}
_AFTER_FIRST = re.compile(r"^\s*(?:,|and\b|&|is\b|are\b|was\b|were\b|will\b|has\b|have\b|"
                          r"had\b|said\b|went\b|and\b|'s\b|wants\b|likes\b|\()")


def names_in(text: str) -> list[str]:
    """People's names: capitalised words that are not common words, days, months or places.
    A word that starts a sentence counts only when a name-like word follows ("Alice and")."""
    out = []
    for found in _CAPITALISED.finditer(text):
        parts = [p for p in found.group(1).split() if p.lower().rstrip("'s") not in _NOT_PEOPLE
                 and p.lower() not in _DAYS + _MONTHS and not u.CJK.search(p)]
        if not parts or (len(parts) == 1 and u.targets_in(parts[0])):
            continue
        start = found.start()
        opens = start == 0 or re.search(r"[.!?:;\n]\s*$", text[:start])
        if opens and parts[0] == found.group(1).split()[0] and len(parts) == 1 and \
                not _AFTER_FIRST.match(text[found.end():]):
            continue
        name = " ".join(parts)
        if name not in out:
            out.append(name)
    return out


# A Chinese name opening a clause, or joined to one ("小明和小红"), told by what follows
# it: "小明今年25岁", "小红住在上海", "小明和小红周六要去…".
_AFTER_NAME_ZH = (r"(?=\s*(?:今年|现年|是|住|在|的|有|喜欢|要|想|和|与|跟|、|都|也|一起|去|周|星期|打算|"
                  r"准备|计划|说|告诉|问|飞|坐|乘|带|今天|明天|后天|下周|上午|下午|晚上|\d|"
                  r"[一二三四五六七八九十]+岁))")
_NAME_ZH = re.compile(r"(?:^|(?<=[，。；：！？,.;:!?\s]))([\u4e00-\u9fff]{2,3}?)" + _AFTER_NAME_ZH)
_WITH_ME_ZH = re.compile(r"我(?:和|跟|与|带着?)([\u4e00-\u9fff]{2,3}?)" + _AFTER_NAME_ZH)  # 我和小红去…
_MORE_NAMES_ZH = re.compile(r"^[和与跟、]([\u4e00-\u9fff]{2,3}?)" + _AFTER_NAME_ZH)
# What a Chinese event is called: "参加品茶会" → 品茶会.
_EVENT_ZH = re.compile(r"(?:参加|出席|举办|举行|参与)(?:一个|一场|个|场)?([\u4e00-\u9fff]{2,8}?)"
                       r"(?=[，。；！？、,.;!?\s]|$)")
_NOT_NAMES_ZH = ("我们", "你们", "他们", "她们", "今天", "明天", "昨天", "现在", "这个", "那个",
                 "请你", "帮我", "用户", "我的", "你的", "他的", "她的", "大家", "今年", "去年")


# words a name does not start with: pronouns, requests, verbs of going, and dates (日飞成都)
_NOT_NAME_STARTS_ZH = ("我", "你", "他", "她", "请", "帮", "飞", "去", "到", "坐", "乘", "回", "从",
                       "日", "月", "年", "号")


@dataclass
class _Shifted:
    """A match made on text[offset:], read as one on the whole text."""
    match: re.Match
    offset: int

    def group(self, n: int) -> str:
        return self.match.group(n)

    def span(self, n: int) -> tuple[int, int]:
        start, end = self.match.span(n)
        return start + self.offset, end + self.offset


def chinese_names_in(text: str) -> list[str]:
    """People's names written in Chinese at the start of a clause, and those joined to
    them ("小明和小红周六…": 小明, 小红)."""
    matches = []
    for match in [*_NAME_ZH.finditer(text or ""), *_WITH_ME_ZH.finditer(text or "")]:
        matches.append(match)
        end = match.end()
        while more := _MORE_NAMES_ZH.match(text[end:]):
            matches.append(_Shifted(more, end))
            end += more.end()
    places = [(m.start(), m.end()) for p in u.find_places(text or "") if p.zh
              for m in re.finditer(re.escape(p.zh), text or "")]
    return list(dict.fromkeys(
        n for n, (start, end) in ((m.group(1), m.span(1)) for m in matches)
        if n not in _NOT_NAMES_ZH and not n.startswith(_NOT_NAME_STARTS_ZH)
        # not a piece of a place: 飞成都 is a flight to 成都, not a person 飞成
        and not any(start < p_end and p_start < end for p_start, p_end in places)))


_PHRASE = re.compile(
    r"(?i)\b(?:going to|go to|went to|attend(?:ing)?|join(?:ing)?|visit(?:ing)?|"
    r"plan(?:ning)?|host(?:ing)?|organi[sz](?:e|ing)|hav(?:e|ing)|is|called|named|"
    r"at|to|for)\s+(?:a|an|the|our|my|their|his|her)\s+"
    r"((?-i:[a-zA-Z][\w-]*)(?:\s+(?-i:[a-z][\w-]*)){0,3}?)"
    r"(?=\s+(?:on|at|in|with|next|this|tomorrow|today|tonight|from|by|for|and|this|"
    r"that|after|before|around|starting)\b|\s*[,.!?;]|\s*$)")
_PROPER_PHRASE = re.compile(r"\b(?:going to|go to|attend(?:ing)?|at|visit(?:ing)?)\s+"
                            r"([A-Z][\w-]*(?:\s+[A-Z0-9][\w-]*)*)")


def phrase_in(text: str) -> str | None:
    """What an event or a thing is called: "a science fair" in "going to a science fair"."""
    found = _PHRASE.search(text) or _EVENT_ZH.search(text)
    if found:
        return found.group(1)
    proper = _PROPER_PHRASE.search(text)
    if proper and proper.group(1).lower() not in _DAYS + _MONTHS:
        return proper.group(1)
    return None


def strings_for(key: str, source: Source) -> list[str]:
    """The strings of a list key: people, places, languages, e-mails, else a written list
    ("ingredients: eggs, flour and milk")."""
    role = role_of(key, {}) or ("person" if is_person_entity((key,)) else "")
    people = role == "person" or (role == "name" and "name" in key_words(key))
    for text in source.texts:
        if people:  # "participants", "names"; not "titles" or "events"
            found = names_in(text) or chinese_names_in(text)
        elif role == "place":
            found = [t.value for t in u.targets_in(text)]
        elif role == "language":
            found = list(dict.fromkeys(u.languages_in(text)))
        elif role in ("email", "url", "phone"):
            found = re.findall(PATTERNS[role], text)
        else:
            found = []
        found = found or written_list(key, text)
        if found:
            return found
    return []


def written_list(key: str, text: str) -> list[str]:
    words = u.split_name(key)
    name = r"[\s_-]*".join(map(re.escape, words))
    said = re.search(rf"(?i)\b{name}\b\s*(?:are|is|include|:|：)\s*([^.;\n]+)",
                     text) if words else None
    if not said:
        return []
    parts = re.split(r"\s*(?:,|，|、|\band\b|\bor\b)\s*", said.group(1))
    return [p.strip(" '\"") for p in parts if p.strip(" '\"")]


# ------------------------------------------------------------------ dates and times

_WEEKDAY = re.compile(r"(?i)\b(?:(next|this|coming)\s+)?(" + "|".join(_DAYS) + r")\b")
_WEEKDAY_ZH = re.compile(r"(下)?(?:周|星期|礼拜)([一二三四五六日天])")
_RELATIVE = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1, "今天": 0, "明天": 1,
             "后天": 2, "昨天": -1}
_MONTH_DAY = re.compile(r"(?i)\b(" + "|".join(m[:3] for m in _MONTHS) + r")[a-z]*\.?\s+"
                        r"(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b")
_DAY_MONTH = re.compile(r"(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?("
                        + "|".join(m[:3] for m in _MONTHS) + r")[a-z]*\.?(?:,?\s+(\d{4}))?\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def date_in(text: str, fmt: str | None, today: date) -> str | None:
    """The date the text gives: as written ("Friday", "March 3") for a plain string, as an
    ISO date for format "date" (or date-time) — relative days count from today (clock)."""
    found = dated(text, today)
    if found is None:
        return None
    written, day = found
    if fmt == "date":
        return day.isoformat() if day else None
    if fmt == "date-time":
        clock_time = time_in(text, True)
        return f"{day.isoformat()}T{clock_time or '00:00:00Z'}" if day else None
    return written


def dated(text: str, today: date) -> tuple[str, date | None] | None:
    """(as written, the day) of the first date in the text."""
    iso = _ISO_DATE.search(text)
    if iso:
        try:
            return iso.group(0), date(*map(int, iso.groups()))
        except ValueError:
            return iso.group(0), None
    for pattern, month_at, day_at in ((_MONTH_DAY, 1, 2), (_DAY_MONTH, 2, 1)):
        found = pattern.search(text)
        if found:
            month = [m[:3] for m in _MONTHS].index(found.group(month_at).lower()[:3]) + 1
            year = int(found.group(3)) if found.group(3) else today.year
            try:
                return found.group(0), date(year, month, int(found.group(day_at)))
            except ValueError:
                return found.group(0), None
    weekday = _WEEKDAY.search(text)
    if weekday:
        ahead = (_DAYS.index(weekday.group(2).lower()) - today.weekday()) % 7
        ahead += 7 if (weekday.group(1) or "").lower() == "next" and ahead == 0 else 0
        return weekday.group(0), today + timedelta(days=ahead)
    weekday_zh = _WEEKDAY_ZH.search(text)
    if weekday_zh:  # 周五, 星期五, 下周一 (next week's), 星期天
        ahead = ("一二三四五六日".index(weekday_zh.group(2).replace("天", "日"))
                 - today.weekday()) % 7
        ahead += 7 if weekday_zh.group(1) and ahead < 7 - today.weekday() else 0
        return weekday_zh.group(0), today + timedelta(days=ahead)
    for word, days in _RELATIVE.items():
        if re.search(rf"(?i)\b{word}\b" if word.isascii() else word, text):
            return word, today + timedelta(days=days)
    return None


_CLOCK = re.compile(r"(?i)\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)|\b(\d{1,2}):(\d{2})\b")


def time_in(text: str, iso: bool) -> str | None:
    """A time of day: as written ("3pm"), or "15:00:00Z" when `iso` (RFC 3339's full-time,
    which JSON Schema's "time" format wants, needs an offset: the text gives none)."""
    found = _CLOCK.search(text)
    if not found:
        return None
    if not iso:
        return found.group(0)
    hour = int(found.group(1) or found.group(4))
    minute = int(found.group(2) or found.group(5) or 0)
    half = (found.group(3) or "").lower()
    if half.startswith("p") and hour < 12:
        hour += 12
    if half.startswith("a") and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute % 60:02d}:00Z" if hour < 24 else None


# ------------------------------------------------------------------ numbers, booleans, enums

_UNIT_AFTER = {"age": r"(?:years?\s*old|yrs?\b|岁)", "temperature": r"(?:°|℃|℉|degrees?)",
               "percent": r"(?:%|percent)"}  # key word: the unit written after its number
_CURRENCY = r"[$€£¥]\s*"


def find_number(schema: Mapping, key: str, source: Source, integer: bool) -> Any:
    """The number the user's words give `key`, or MISSING: said so ("age: 30"), with its
    unit ("25 years old", "$30", "16°C"), next to the key's word ("3 tickets"), or the
    only number there is."""
    for text in source.texts:
        value = number_for(key, text)
        if value is not None:
            return clamp(value, schema, integer)
    numbers = [n for n in u.numbers_in(source.texts[0]) if n not in source.used]
    if len(numbers) == 1:
        source.used.add(numbers[0])
        return clamp(numbers[0], schema, integer)
    return MISSING


def number_for(key: str, text: str) -> float | None:
    words = key_words(key)
    said = said_value(key, text)
    if said and u.numbers_in(said):
        return u.numbers_in(said)[0]
    number = r"(-?\d+(?:\.\d+)?)"
    if words & {"price", "cost", "amount", "total", "budget", "fee", "salary"}:
        found = re.search(_CURRENCY + number, text) or re.search(
            number + r"\s*(?:dollars?|usd|euros?|pounds?|yuan|rmb|元|块)", text, re.I)
        if found:
            return float(found.group(1))
    for word, unit in _UNIT_AFTER.items():
        if u.stem(word) in words:
            found = re.search(number + r"\s*" + unit, text, re.I)
            if found:
                return float(found.group(1))
    if words & {"year"}:
        found = re.search(r"\b(1[89]\d\d|20\d\d|21\d\d)\b", text)
        if found:
            return float(found.group(1))
    for word in sorted(words - {"number", "count", "num", "total", "of", "how", "many"}):
        found = re.search(number + rf"\s+(?:\w+\s+)?{re.escape(word)}", text, re.I) or \
            re.search(rf"\b{re.escape(word)}\w*\s+(?:of\s+|is\s+|=\s*|:\s*)?" + number, text, re.I)
        if found:
            return float(found.group(1))
    return None


_NEGATION = re.compile(r"(?i)\b(?:not|no|never|don't|doesn't|isn't|aren't|won't|can't|without)"
                       r"\s+(?:\w+\s+){0,2}$|不|没")


_NOT_TOLD = {"is", "has", "have", "can", "should", "are", "was", "does", "do", "will", "would",
             "need", "want", "about", "of", "for", "with", "in", "on", "the", "a", "an", "to",
             "any", "some", "it", "this", "that", "user", "request", "question", "message",
             "input", "text", "contain", "mention", "relat"}  # words a yes/no key is made of


def find_boolean(key: str, source: Source) -> Any:
    """True when the user's words say what the key names ("is_vegetarian" in "I'm
    vegetarian"), False when they deny it ("not vegetarian"); True too when they speak of
    what the key is about ("about_weather" for "Will it be sunny?", "天气"); else MISSING."""
    words = key_words(key) - _NOT_TOLD
    said = said_value(key, source.texts[0])
    if said:
        return said.lower() in ("true", "yes", "y", "1", "是", "对")
    for text in source.texts:
        for word in sorted(words):
            hit = re.search(rf"(?i)\b{re.escape(word)}", text)
            if hit:
                return not _NEGATION.search(text[:hit.start()])
    about = u.concepts(" ".join(words))
    if about and about & u.concepts(source.texts[0]):
        return True
    return MISSING


def mentions(text: str, value: str) -> bool:
    return bool(value) and re.search(rf"(?i)(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])",
                                     text) is not None


def pick_enum(values: list, key: str, source: Source) -> Any:
    """The enum value the user's words name ("in Fahrenheit"), else the brain's reply's
    (a sentiment word it used), else MISSING."""
    strings = [v for v in values if isinstance(v, str)]
    for text in [*source.texts, source.said]:
        said = u.enum_value(strings, text) if strings else None
        if said is not None:
            return said
        for value in values:
            if not isinstance(value, str) and value is not None and mentions(text, str(value)):
                return value
    return MISSING


# ------------------------------------------------------------------ json_object

# Keys listed in words. An item is a name in backticks or quotes (`setup`, "name", 'age'),
# or bare: one word, or up to three before a separator ("first name, last name and age").
_STOP = (r"(?:and|or|the|a|an|in|of|for|from|with|to|as|is|are|was|be|that|which|each|"
         r"keys?|fields?|json|object)\b")
_QUOTED = r"[`'\"“‘]\s*[A-Za-z_][\w.\-]*\s*[`'\"”’]"
_BARE = (rf"(?!{_STOP})[A-Za-z_][\w\-]*(?:\s+(?!{_STOP})[A-Za-z_][\w\-]*){{1,2}}"
         r"(?=\s*(?:,|，|、|;|\band\b|&|和|与|及|[.:：;)\n。]|$))"
         rf"|(?!{_STOP})[A-Za-z_][\w\-]*")
_ITEM = rf"(?:{_QUOTED}|{_BARE})"
_SEPARATOR = r"\s*(?:,|，|、|;|/|&|\band\b|\bor\b|以及|和|与|及|跟)\s*(?:\band\s+)?(?:the\s+)?"
_LIST = rf"(?P<list>{_ITEM}(?:{_SEPARATOR}{_ITEM})*)"
_KEY_WORD = r"(?:keys?|fields?|properties|attributes|entries|members)"
_KEY_WORD_ZH = r"(?:字段|键名?|属性|栏位)"
_COUNT_ZH = r"(?:[两二三四五六七八九十\d]+\s*个\s*)?"
_KEY_LISTS = (  # the listing; the first with quoted names wins, else the longest
    # "with keys name, age and city", "fields: name, age", "where the key is `sentiment`"
    re.compile(rf"(?i)\b{_KEY_WORD}\s*(?:named|called|like|are|is|:|—|-)?\s*(?:the\s+)?{_LIST}"),
    # "with `setup` and `punchline` keys", "the name and age fields"
    re.compile(rf"(?i){_LIST}\s+{_KEY_WORD}\b"),
    # "a JSON object with / containing name, age and city"
    re.compile(rf"(?i)\bjson(?:\s+object)?\s+(?:with|containing|having|including|of|that "
               rf"(?:has|have|contains))\s+(?:the\s+)?{_LIST}"),
    # "字段：name、age、city", "字段为 name 和 age", "包含 name 和 age 字段", "name、age 两个字段"
    re.compile(rf"(?i){_KEY_WORD_ZH}\s*(?:为|是|包括|有|:|：)\s*{_LIST}"),
    re.compile(rf"(?i){_LIST}\s*{_COUNT_ZH}{_KEY_WORD_ZH}"),
)
_LIST_KEYS = {"participants", "attendees", "people", "names", "members", "guests", "friends",
              "tags", "keywords", "items", "languages", "cities", "places", "ingredients",
              "steps", "emails", "authors", "speakers", "topics", "skills", "hobbies"}
_NUMBER_KEYS = {"age", "count", "number", "quantity", "price", "cost", "amount", "total",
                "temperature", "temp", "year", "score", "rating", "confidence", "percent",
                "budget", "size", "length", "width", "height", "weight", "duration",
                "days", "nights", "hours", "minutes", "seconds", "weeks", "months", "years"}


def json_object(source: Source) -> dict:
    """JSON mode's object: the keys a message asks for, filled from the conversation;
    {"answer": the brain's reply} when no message names any."""
    schema = asked_schema(source)
    if not schema["properties"]:
        return {"answer": source.said}
    filler = Filler(schema, source, strict=True)
    value = filler.find(schema, "", ("",), 0)
    return filler.repaired(filler.blank(schema, 0) if value is MISSING else value)


def asked_schema(source: Source) -> dict:
    """The object JSON mode is asked for, as a schema: a JSON Schema in a message (the
    last one: format instructions show an example schema first), else an example object
    (its keys and its values' types; "..." for a value to fill), else keys listed in words
    (listed_keys: "with fields name, age and city", "with `setup` and `punchline` keys",
    "包含 name 和 age 字段"), each typed by its name; strings and numbers may be null."""
    schemas = [o for o in outer_objects(source.instructions) if is_schema(o)]
    if schemas:  # "Here is the output schema: {...}" (LangChain's format instructions)
        return dict(schemas[-1])
    for example in objects_in(_PLACEHOLDER.sub(r"\1null", source.instructions)):
        return {"type": "object", "properties": {str(k): like(v, str(k)) for k, v in
                                                 example.items()},
                "required": [str(k) for k in example], "additionalProperties": False}
    for text in source.instructions.split("\n"):
        keys, listing = listed_keys(text)
        if keys:  # the list itself is no value: "with fields name and city: ..." names no city
            source.texts = [t.replace(listing, " ") for t in source.texts]
            return {"type": "object", "properties": {k: typed_by_name(k) for k in keys},
                    "required": keys, "additionalProperties": False}
    return {"type": "object", "properties": {}}


_PLACEHOLDER = re.compile(r"([:\[,]\s*)(?:\.\.\.|…)(?=\s*[,}\]])")  # {"city": ...}: a value to fill


def outer_objects(text: str) -> list[Mapping]:
    """The JSON objects in `text` that are not inside another one, in order."""
    return [value for value, _, _ in outer_spans(text)]


def outer_spans(text: str) -> list[tuple[Mapping, int, int]]:
    """(object, start, end) of each JSON object in `text` not inside another one."""
    found, decoder, end = [], json.JSONDecoder(), 0
    for start in (m.start() for m in re.finditer(r"\{", text or "")):
        if start < end:
            continue
        try:
            value, stop = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, Mapping):
            found.append((value, start, stop))
            end = stop
    return found


def plain_words(text: str) -> str:
    """A user message without the JSON objects in it, and, when one of them was a JSON
    Schema, without the lines about the schema (format instructions, LangChain's among
    them): what is left is what the user said."""
    spans = outer_spans(text)
    for _, start, stop in reversed(spans):
        text = text[:start] + " " + text[stop:]
    if any(is_schema(value) for value, _, _ in spans):
        text = "\n".join(line for line in text.splitlines()
                         if not re.search(r"(?i)\bschema\b", line))
    return text


def is_schema(value: Any) -> bool:
    """Whether a JSON object is a JSON Schema of an object ({"properties": {"name":
    {"type": "string"}}, ...}) rather than an example of one."""
    properties = value.get("properties") if isinstance(value, Mapping) else None
    if not (isinstance(properties, Mapping) and properties and all(
            isinstance(p, Mapping) and (SCHEMA_WORDS & set(p)) for p in properties.values())):
        return False
    try:
        jsonschema.Draft202012Validator.check_schema(value)
    except jsonschema.SchemaError:
        return False  # schema-shaped, but not one a validator could use
    return True


SCHEMA_WORDS = {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "items",
                "properties"}


def listed_keys(text: str) -> tuple[list[str], str]:
    """(["name", "age", "city"], the words that list them) from "a JSON with fields name,
    age and city", "Respond in JSON with `setup` and `punchline` keys", "keys: a, b",
    "包含 name 和 age 字段", "字段：name、age"; ([], "") when the text lists no keys. Of
    several listings, one that quotes its names wins (a bare word may be a value:
    "keys: Xiaoming is 25"), then the one with most names."""
    found = []
    for pattern in _KEY_LISTS:
        for match in pattern.finditer(text or ""):
            items = [i for i in re.split(_SEPARATOR, match.group("list")) if i.strip()]
            keys = [re.sub(r"\s+", "_", item.strip(" `'\"“”‘’")) for item in items]
            keys = [k for k in keys if k and not k.isdigit()]
            quoted = sum(bool(re.fullmatch(_QUOTED, item)) for item in items)
            if keys:
                found.append((quoted > 0, len(keys), -match.start(), keys, match.group(0)))
    if not found:
        return [], ""
    *_, keys, listing = max(found, key=lambda f: f[:3])
    return list(dict.fromkeys(keys)), listing


def like(value: Any, key: str, top: bool = True) -> dict:
    """A schema for a key, from the type of its example value (a placeholder string,
    "..." or "string", types a key by its name: "age" is a number)."""
    if isinstance(value, bool):
        return {"type": ["boolean", "null"]}
    if isinstance(value, (int, float)):
        return {"type": ["number", "null"]}
    if isinstance(value, list):
        return {"type": "array", "items": like(value[0], key, False) if value else
                {"type": "string"}}
    if isinstance(value, Mapping):
        return {"type": "object", "properties": {str(k): like(v, str(k)) for k, v in
                                                 value.items()},
                "required": [str(k) for k in value], "additionalProperties": False}
    placeholder = not isinstance(value, str) or value.strip(". ") == "" or \
        value.lower() in ("string", "str", "number", "int", "float", "boolean", "bool")
    if placeholder and top:
        return typed_by_name(key)
    return {"type": ["string", "null"]} if top else {"type": "string"}


def typed_by_name(key: str) -> dict:
    words = set(u.split_name(key))
    if words & _LIST_KEYS:
        return {"type": "array", "items": {"type": "string"}}
    if words & _NUMBER_KEYS or words & {"how", "many"}:
        return {"type": ["number", "null"]}
    if words and next(iter(u.split_name(key))) in ("is", "has", "can", "should"):
        return {"type": ["boolean", "null"]}
    return {"type": ["string", "null"]}


def flat_items(data: Mapping, depth: int = 0) -> list[tuple[str, Any]]:
    """A JSON object's (key, value) pairs, then those of the objects inside it."""
    pairs = list(data.items())
    if depth < 2:
        for value in list(data.values()):
            if isinstance(value, Mapping):
                pairs += flat_items(value, depth + 1)
    return pairs


# ------------------------------------------------------------------ strict tools

def brain_view(body: Mapping) -> Mapping:
    """The request as the brain should read it: each strict function's parameters with
    their $refs inlined and `X | None` read as X, and a required parameter counted as
    optional when null is allowed or the request gives its value anyway (structured.py
    fills it, see strict_call). The brain then asks back ("Which city?") only for what
    nothing can fill. Non-strict tools are shown as they are."""
    tools = body.get("tools")
    if not isinstance(tools, list) or not any(is_strict(t) for t in tools):
        return body
    source = source_of(body, "")
    return {**body, "tools": [simpler(t, source) if is_strict(t) else t for t in tools]}


def is_strict(tool: Any) -> bool:
    fn = tool.get("function") if isinstance(tool, Mapping) else None
    return isinstance(fn, Mapping) and fn.get("strict") is True and \
        isinstance(fn.get("parameters"), Mapping)


def simpler(tool: Mapping, source: Source) -> dict:
    fn = tool["function"]
    filler = Filler(fn["parameters"], source, strict=True)
    root = filler.resolve(fn["parameters"])
    properties, required = {}, []
    for name, sub in (root.get("properties") or {}).items():
        sub = filler.resolve(sub)
        branches = [filler.resolve(b) for b in sub.get("anyOf") or []]
        real = [b for b in branches if types_of(b) != ["null"]]
        nullable = "null" in types_of(sub) or len(real) < len(branches)
        shown = {**(real[0] if len(real) == 1 else sub),
                 **{k: sub[k] for k in ("description", "title") if k in sub}}
        properties[name] = {k: v for k, v in shown.items() if k != "anyOf" or len(real) > 1}
        if name in (root.get("required") or []) and not nullable and \
                filler.find(sub, name, ("",), 1) is MISSING:
            required.append(name)
    parameters = {**root, "properties": properties, "required": required}
    return {**tool, "function": {**fn, "parameters": parameters}}


def strict_call(call: Mapping, body: Mapping, source: Source) -> dict | None:
    """A tool call whose arguments are valid against its strict function's parameters
    (repaired when they were not); the call unchanged for a non-strict function; None for
    a strict call that cannot be made valid (it is not sent)."""
    fn = call.get("function") or {}
    tool = next((t.get("function") for t in body.get("tools") or []
                 if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
                 and t["function"].get("name") == fn.get("name")), None)
    if not tool or tool.get("strict") is not True:
        return dict(call)
    schema = tool.get("parameters") or {"type": "object", "properties": {},
                                        "additionalProperties": False, "required": []}
    arguments = u.read_result(fn.get("arguments") or "{}")
    source.used = set()  # each call reads the request afresh
    filler = Filler(schema, source, strict=True)
    if not isinstance(arguments, Mapping):
        arguments = {}
    if asks_an_agent(schema):  # the agent asked is asked the request itself, not a word of it
        arguments = {"input": source.texts[0].strip() or str(arguments.get("input") or "")}
    arguments = filler.repaired(completed(filler, schema, dict(arguments)))
    if not filler.validator.is_valid(arguments):
        return None
    return {**call, "function": {**fn, "arguments": json.dumps(
        arguments, ensure_ascii=False, separators=(",", ":"))}}


def asks_an_agent(schema: Mapping) -> bool:
    """Whether a function's parameters are the Agents SDK's agent.as_tool() input: one
    string `input` (its schema titled AgentAsToolInput), which another agent answers."""
    return schema.get("title") == "AgentAsToolInput" and \
        list(schema.get("properties") or {}) == ["input"]


READER_FIRST = ("date", "time", "person", "name", "email", "url", "phone")  # roles where
# this module's reading beats the brain's free-text guess ("on Friday" is no event name)


def completed(filler: Filler, schema: Mapping, arguments: dict) -> dict:
    """The brain's arguments, each key the schema lacks dropped, each required key it
    missed (or filled with a wrong type) found in the request or blank. For a key whose
    name says what it holds (a date, a person, an event's name), a value read here wins."""
    schema = filler.resolve(schema)
    properties = schema.get("properties") or {}
    out = {}
    for name, sub in properties.items():
        read = filler.find(sub, name, ("",), 1)
        reader_first = role_of(name, filler.resolve(sub)) in READER_FIRST
        if name in arguments and filler.fits(sub, arguments[name]) and \
                (read is MISSING or not reader_first):
            out[name] = arguments[name]
        else:
            out[name] = filler.blank(sub, 1) if read is MISSING else read
    return out
