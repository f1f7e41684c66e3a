"""How the offline model reads long-term memory: what it was given, which memory answers,
and when it searches or saves by itself.

A real model reads retrieved memories the way it reads anything else in its context; the
offline model follows readable rules instead, and only ever knows what the request says:

- **Where memories come from.** Lines of the form "- 2026-03-15 [user, s-0315] text" in a
  system message (lesson_lib.longterm.context_message writes them: date, [source, where],
  text), and the "memories" list of a search_memory tool result ({"text", "source",
  "date"}). Nothing else is read as a memory.
- **Which memory answers** (`choose`). Each memory gets the share of the question's words
  it has (English stems; Chinese character pairs without function characters such as
  的/是/什么; numbers), plus the cosine of the two texts' offline embeddings (the same
  embedder as the `/v1/embeddings` route: it rewards a paraphrase the words miss). The
  best one answers if its score is at least ANSWER_AT and it names every proper name the
  question names ("Tokyo", "Li Na"); else the model says it does not know, and does not
  guess from a near miss ("my dog's name" is not answered by "my cat is called Mantou").
- **The newer wins.** Among the best memory and those about the same thing
  (`same_thing`: half the words of the shorter are in the other) that score within NEAR
  of it, the newest answers, and the older one is named in the answer as replaced ("That
  replaces what I had from …"). A question about live data (the weather, the time) is
  answered from a memory only if the memory speaks of it too.
- **When it searches** (`search_tool`): a question that no other tool answers (a
  question about the past, `about_past`, "What did we decide last week …?", is never
  given to another tool for a word it shares with it),
  not a greeting or thanks, not the name question it can already answer, and that the
  memories already in the request do not answer, gets one `search_memory(query=...)`
  call per turn, with the question as the query.
- **When it saves** (`save_tool`, `worth_saving`): a statement (not a question) that says
  "remember …" / "记住…", states a decision ("we decided", "我们决定"), or states a lasting
  preference (understand.preferences_in) gets one `save_memory(text=..., subject=...)`
  call with the user's own words; the profile tool (remember_preference), when offered
  too, keeps the preferences it has a key for, and save_memory the rest.

The numbers (ANSWER_AT, NEAR) were chosen on lesson_lib/data/longterm_eval.json, whose
end-to-end accuracy lesson_lib.longterm_eval.answer_accuracy() measures; like every rule
here they make a stand-in, not a reader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lesson_lib.offline import understand as u
from lesson_lib.terms import terms as index_terms

ANSWER_AT = 0.7   # the least score (word share + cosine) of a memory that answers
NEAR = 0.8        # memories within this share of the best score are "about the same thing"

_LINE = re.compile(r"^\s*-\s*(\d{4}-\d{2}-\d{2})\s*\[([A-Za-z_]+)(?:,\s*([^\]]*))?\]\s*(.+?)\s*$",
                   re.MULTILINE)
_FUNCTION_ZH = set("的是了吗呢吧啊么什哪谁几多少怎我你他她们在有和与就都也还要想会能个这那把被给让次")
_NAME = re.compile(r"(?<!^)(?<![.?!:]\s)\b([A-Z][a-z]+)")
_QUESTION = re.compile(r"[?？]\s*$|^(?i:what|what's|who|whom|whose|where|when|which|why|how|do|does|"
                       r"did|is|are|am|was|were|can|could|should|have|has)\b|吗|什么|哪|谁|几|多少|"
                       r"怎么|何时|是否|有没有")
_SAVE = re.compile(r"(?i)^\s*(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?\b[\s,:]*|"
                   r"^\s*(?:请)?(?:记住|记一下|记下)[：:，,\s]*")
_PAST = re.compile(r"(?i)\b(?:did (?:we|i|you)|have (?:we|i)|we (?:decided|agreed|talked|discussed|said|"
                   r"booked|planned|chose)|i (?:told|said|mentioned)|last (?:week|time|month|year)|"
                   r"earlier|previously|remember|recall)\b|上次|之前|以前|上周|上个月|我们决定|决定了|"
                   r"说过|提过|记得|聊过|讨论过|商量")
_SENTENCE_END = re.compile(r"(?<=[.!。！])\s*")
_DECIDED = re.compile(r"(?i)\b(?:we|i)\s+(?:have\s+)?(?:decided|agreed|chose|booked|picked)\b|"
                      r"我们决定|我决定|我们定了|我定了|我们选了|商量好了")


@dataclass(frozen=True)
class Remembered:
    """One memory the request carries."""
    text: str
    date: str          # "2026-03-15" ("" if the result gave none)
    source: str        # user, session, document, tool, assistant
    ref: str = ""      # where: a session id, a file name


# ------------------------------------------------------------------ reading the request

def in_context(messages: list) -> list[Remembered]:
    """The memory lines of the system messages, in the order written."""
    found: list[Remembered] = []
    for m in messages:
        if isinstance(m, Mapping) and m.get("role") in ("system", "developer"):
            for date, source, ref, text in _LINE.findall(u.text_of(m)):
                found.append(Remembered(text, date, source.lower(), (ref or "").strip()))
    return list(dict.fromkeys(found))


def in_result(data: Any) -> list[Remembered] | None:
    """The memories of a search_memory result ({"memories": [{"text", "source", "date"}]}),
    or None if `data` is not one."""
    if not isinstance(data, Mapping) or not isinstance(data.get("memories"), list):
        return None
    return [Remembered(str(m["text"]), str(m.get("date") or "")[:10], str(m.get("source") or ""),
                       str(m.get("ref") or ""))
            for m in data["memories"] if isinstance(m, Mapping) and m.get("text")]


def is_question(text: str) -> bool:
    return bool(_QUESTION.search((text or "").strip()))


def about_past(text: str) -> bool:
    """Whether a question asks about what was said or decided before ("What did we decide
    last week …?", "上次说的…"): memory answers it, not a tool whose words it shares."""
    return is_question(text) and bool(_PAST.search(text or ""))


# ------------------------------------------------------------------ which memory answers

@lru_cache(maxsize=4096)
def terms(text: str) -> frozenset[str]:
    """The content words of `text`: the long-term store's terms (lesson_lib.terms: English
    stems, numbers, Chinese character pairs), without the Chinese pairs that hold a
    function character (的, 是, 什么 ...): "我的护照号码是多少" keeps 护照, 照号, 号码."""
    return frozenset(t for t in index_terms(text)
                     if not (u.CJK.search(t) and set(t) & _FUNCTION_ZH))


def names(text: str) -> set[str]:
    """Capitalised words inside a sentence: the names a question asks about."""
    return {w.lower() for w in _NAME.findall(text)}


def _cosines(question: str, texts: list[str]) -> list[float]:
    from lesson_lib.vectors import offline_vectors  # noqa: PLC0415 (loaded on first use)

    vectors = offline_vectors([question, *texts])
    return [float(x) for x in vectors[1:] @ vectors[0]]


def scores(question: str, memories: list[Remembered]) -> list[float]:
    """Each memory's score for `question`: word share (shared / √question words) + cosine."""
    if not memories:
        return []
    wanted = terms(question)
    shares = [len(wanted & terms(m.text)) / (len(wanted) ** 0.5) if wanted else 0.0
              for m in memories]
    return [s + c for s, c in zip(shares, _cosines(question, [m.text for m in memories]),
                                  strict=True)]


@dataclass(frozen=True)
class Choice:
    memory: Remembered
    replaces: Remembered | None = None  # an older memory about the same thing


def choose(question: str, memories: list[Remembered]) -> Choice | None:
    """The memory that answers `question` (the newest of the near-best), or None."""
    scored = scores(question, memories)
    if not scored or max(scored) < ANSWER_AT:
        return None
    best = max(scored)
    top = memories[scored.index(best)]
    same = [(s, m) for m, s in zip(memories, scored, strict=True)
            if s >= NEAR * best and (m is top or same_thing(m, top))]
    chosen = max(same, key=lambda sm: (sm[1].date, sm[0]))[1]  # the newest; same day: the best
    same = [m for _, m in same]
    if not names(question) <= names_and_words(chosen.text):
        return None
    if not all(speaks_of(chosen.text, about, question)
               for about in u.concepts(question) & set(u.LIVE_DATA)):
        return None  # "What's the weather in Chengdu?" is not answered by the trip's budget
    older = [m for m in same if m.date < chosen.date]
    return Choice(chosen, max(older, key=lambda m: m.date) if older else None)


_CLOCK = re.compile(r"\d{1,2}[:.]\d{2}|\d{1,2}\s*(?:am|pm)\b|\d+\s*点", re.IGNORECASE)
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec")
_DATE = re.compile(rf"\d{{1,2}}\s*月\s*\d{{1,2}}\s*[日号]|\d{{4}}-\d{{2}}-\d{{2}}|"
                   rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+"
                   rf"(?:of\s+)?(?:{_MONTHS})\b", re.IGNORECASE)
_NOW = re.compile(r"今天|今日|现在|此刻|眼下|这会儿|\b(?:now|today|tonight|current|currently)\b",
                  re.IGNORECASE)
_ASKS_DATE = re.compile(r"几号|几月|日期|哪天|哪一天|哪日|什么时候|\b(?:date|when|what day|which day)\b",
                        re.IGNORECASE)  # a date, not a time of day ("What time …", 几点)


def speaks_of(text: str, about: str, question: str = "") -> bool:
    """Whether a memory speaks of a kind of live data a question names: its concept
    (weather, news …); for "time", a time of day ("08:00", "3 pm", "3点"), or a date
    ("8月9日", "May 3") when the question asks the date of something rather than of now
    ("小雨的生日是几月几号？" is answered by her birthday; "今天几号？" by no memory, and
    "What time is dinner?" not by a date); for money ("exchange"), a number."""
    if about == "time":
        return bool(_CLOCK.search(text)) or (bool(_DATE.search(text))
                                             and bool(_ASKS_DATE.search(question))
                                             and not _NOW.search(question))
    if about == "exchange":
        return bool(re.search(r"\d", text))
    return about in u.concepts(text)


def same_thing(a: Remembered, b: Remembered) -> bool:
    """Two memories about the same thing: at least half the content words of the shorter
    one are in the other (and two or more): "My budget for the trip is 6,000 yuan" and "I
    raised my trip budget to 8,000 yuan" are; the trip's budget and its train are not."""
    ta, tb = terms(a.text), terms(b.text)
    shared = len(ta & tb)
    return shared >= 2 and shared >= 0.5 * min(len(ta), len(tb))


def names_and_words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]+", text)}


# ------------------------------------------------------------------ the memory tools

def memory_tool(tool: Any) -> str | None:
    """"search" or "save" for a long-term memory tool (search_memory, save_memory,
    recall_memory, store_memory ...), else None: its name speaks of memory, and a verb."""
    words = set(u.split_name(u.tool_name(tool)))
    if not words & {"memory", "memories", "recall", "remembered"}:
        return None
    if words & {"search", "find", "lookup", "look", "recall", "query", "retrieve", "get"}:
        return "search"
    if words & {"save", "store", "remember", "write", "add", "keep"}:
        return "save"
    return None


def search_tool(tools: list) -> Any:
    return next((t for t in tools if memory_tool(t) == "search"), None)


def save_tool(tools: list) -> Any:
    return next((t for t in tools if memory_tool(t) == "save"), None)


def text_param(tool: Any) -> str | None:
    """The tool's first required string parameter (query, text ...)."""
    props = u.properties(tool)
    for name in [*u.required(tool), *props]:
        if props.get(name, {}).get("type", "string") == "string":
            return name
    return None


def worth_saving(text: str, kept_by_profile: set[str]) -> list[tuple[str, str]]:
    """(text, subject) for each sentence of a statement that asks to be kept: "remember
    that …" (its words), a decision, or a lasting preference the profile tool does not
    keep (then its key is the subject). A question keeps nothing."""
    if not text or is_question(text):
        return []
    kept: list[tuple[str, str]] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        asked = _SAVE.search(sentence)
        if asked:
            said = sentence[asked.end():].strip(" ,，。.!！")
            kept += [(said, "")] if said else []
        elif _DECIDED.search(sentence):
            kept.append((sentence, ""))
        else:
            kept += [(sentence, p.key) for p in u.preferences_in(sentence)
                     if p.key != "name" and p.key not in kept_by_profile][:1]
    return kept
