"""Message lists as pictures, for notebooks: readable in JupyterLab, on GitHub and on a projector.

`show_messages(messages)` draws one row per message: its index, a role chip (system grey,
user blue, assistant green, tool orange), the content, each tool call as `name(args)` with a
coloured `#N call_…` badge, and on each tool message the same badge with "↳ answers", so a
call and its result are visibly tied. Whatever `lesson_lib.protocol.find_problems` objects
to (an orphan tool message, a call with no reply) is flagged in red with its explanation;
messages a trim dropped (`dropped=memory.last_dropped`) are shown struck through.

The HTML uses inline styles only (GitHub strips <style> and scripts) and is deterministic
(no random ids, no timestamps), so nbval can compare it. Every view also has a plain-text
form with the same information, used when there is no HTML front end; IPython is not needed.

`show_source(obj)` shows the real source of a lesson_lib function (syntax-highlighted);
`show_request(...)` shows what one call would send; `side_by_side(...)` places views next
to each other.
"""

from __future__ import annotations

import html
import inspect
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.i18n import _, ngettext
from lesson_lib.protocol import ProtocolError, find_problems, validate_request
from lesson_lib.tokens import count_request

ROLE_COLOURS = {"system": "#6b7280", "user": "#2563eb", "assistant": "#15803d",
                "tool": "#c2410c"}
OTHER_ROLE_COLOUR = "#475569"
CALL_COLOURS = ("#7c3aed", "#0891b2", "#db2777", "#4d7c0f", "#b45309", "#4338ca", "#0f766e",
                "#9f1239")  # badge colours, chosen by a call id's position in the list
RED, FAINT, HIGHLIGHT = "#b91c1c", "#fef2f2", "#fef9c3"
MAX_CHARS = 300  # longer content is shortened with "… (N more characters)"
MONO = "ui-monospace,SFMono-Regular,Menlo,Consolas,monospace"
SANS = "system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','Noto Sans CJK SC',sans-serif"


# ----------------------------------------------------------------- rows: the shared model

@dataclass
class _Call:
    number: int | None      # the badge number: #1 is the first call id in the list
    id: str
    text: str               # name(arguments)
    reply: int | None       # index of the tool message answering it (kept messages only)


@dataclass
class _Row:
    label: str              # "3", or "×" for a dropped message
    role: str
    text: str               # the content, shortened; "" when there is none
    calls: list[_Call] = field(default_factory=list)
    answers: _Call | None = None   # on a tool message: the call it names
    paired: bool = True     # on a tool message: does it answer the call right before it?
    problems: list[ProtocolError] = field(default_factory=list)
    dropped: bool = False
    highlighted: bool = False


def _as_dicts(messages: Any) -> list:
    """A message list from a list, or from a memory (anything with to_api_format())."""
    if hasattr(messages, "to_api_format"):
        return messages.to_api_format()
    if isinstance(messages, (str, bytes, Mapping)) or not hasattr(messages, "__iter__"):
        raise TypeError(_("show a list of message dicts or a memory, got {kind} {value}: e.g. "
                          "show_messages(memory) or show_messages([{{'role': 'user', ...}}])")
                        .format(kind=type(messages).__name__, value=f"{messages!r:.60}"))
    return list(messages)


def _as_dict(message: Any) -> Mapping:
    if isinstance(message, Mapping):
        return message
    if hasattr(message, "model_dump"):  # an SDK object: show what it holds
        return message.model_dump(exclude_none=True)
    return {"role": "?", "content": repr(message)}


def _shorten(text: str, limit: int = MAX_CHARS) -> str:
    """`text` cut at `limit` characters; a last line "[truncated … characters]" (the
    marker budget.truncate_text leaves) stays visible, since it says the text was cut."""
    if len(text) <= limit:
        return text
    body, _sep, last = text.rpartition("\n")
    if body and last.startswith("[truncated ") and last.endswith(" characters]"):
        return f"{_shorten(body, limit)}\n{last}"
    more = len(text) - limit
    return text[:limit] + ngettext("… ({n} more character)", "… ({n} more characters)",
                                   more).format(n=more)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: their text, or their type
        return "\n".join(str(p.get("text", f"[{p.get('type', '?')}]")) if isinstance(p, Mapping)
                         else repr(p) for p in content)
    return repr(content)


def _short_id(call_id: Any) -> str:
    text = str(call_id)
    return text if len(text) <= 12 else text[:9] + "…"


def _calls_of(message: Mapping) -> list[Mapping]:
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    return [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []


def _call_text(call: Mapping) -> str:
    fn = call.get("function") if isinstance(call.get("function"), Mapping) else {}
    args = fn.get("arguments")
    args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return _shorten(f"{fn.get('name', '?')}({args})")


def _numbers(messages: list[Mapping]) -> dict[Any, int]:
    """Badge numbers: each call id by the order it first appears in a tool_calls list."""
    numbers: dict[Any, int] = {}
    for m in messages:
        for call in _calls_of(m):
            numbers.setdefault(call.get("id"), len(numbers) + 1)
    return numbers


def _replies(messages: list[Mapping]) -> dict[tuple[int, Any], int]:
    """(assistant index, call id) → index of the tool message right after it that answers."""
    replies: dict[tuple[int, Any], int] = {}
    for i, m in enumerate(messages):
        ids = [c.get("id") for c in _calls_of(m)]
        j = i + 1
        while j < len(messages) and messages[j].get("role") == "tool":
            if messages[j].get("tool_call_id") in ids:
                replies.setdefault((i, messages[j].get("tool_call_id")), j)
            j += 1
    return replies


def _row(label: str, m: Mapping, at: int | None, numbers: dict, replies: dict) -> _Row:
    role = str(m.get("role"))
    row = _Row(label, role, _shorten(_content_text(m.get("content"))))
    row.calls = [_Call(numbers.get(c.get("id")), str(c.get("id")), _call_text(c),
                       replies.get((at, c.get("id")))) for c in _calls_of(m)]
    if role == "tool":
        tid = m.get("tool_call_id")
        name = f" {m['name']}" if m.get("name") else ""
        row.answers = _Call(numbers.get(tid), str(tid), name, None)
        row.paired = at is not None and at in replies.values()
    return row


def _rows(messages: list, dropped: list, highlight: set[int],
          problems: list[ProtocolError]) -> tuple[list[_Row], list]:
    """One row per message (dropped ones first), with each problem on its message's row;
    problems that belong to no single message come back separately."""
    kept = [_as_dict(m) for m in messages]
    gone = [_as_dict(m) for m in dropped]
    numbers, replies = _numbers(gone + kept), _replies(kept)
    rows = [_row("×", m, None, numbers, {}) for m in gone]
    for row in rows:
        row.dropped = True
    general = []
    kept_rows = [_row(str(i), m, i, numbers, replies) for i, m in enumerate(kept)]
    for problem in problems:
        if problem.index is not None and 0 <= problem.index < len(kept_rows):
            kept_rows[problem.index].problems.append(problem)
        else:
            general.append(problem)
    for i in highlight:
        if 0 <= i < len(kept_rows):
            kept_rows[i].highlighted = True
    return rows + kept_rows, general


def _summary(n: int, dropped: int, problems: int) -> str:
    text = ngettext("{n} message", "{n} messages", n).format(n=n)
    if dropped:
        text = _("{messages}, {dropped} dropped by trim").format(messages=text, dropped=dropped)
    if problems:
        return _("✗ {messages}: the API would refuse this list ({problems})").format(
            messages=text,
            problems=ngettext("{n} problem", "{n} problems", problems).format(n=problems))
    return _("✓ {messages}: the API would accept this list").format(messages=text)


# ----------------------------------------------------------------- plain text

def _text_lines(row: _Row, width: int) -> list[str]:
    head = f"[{row.label}]".ljust(width + 2) + " " + row.role.ljust(10) + " "
    pad = " " * len(head)
    first = []
    if row.dropped:
        first.append(_("(dropped by trim)"))
    if row.answers is not None:
        first.append(_("↳{name} answers {badge}").format(name=row.answers.text,
                                                          badge=_badge_text(row.answers))
                     + ("" if row.paired or row.dropped
                        else _(" (no matching call right before)")))
    if row.text or not row.calls:
        first.append(row.text.replace("\n", "\n" + pad) if row.text else _("(no content)"))
    lines = [head + "  ".join(first)] if first else []
    for call in row.calls:
        status = "" if row.dropped else (
            "  " + _("✓ answered at [{index}]").format(index=call.reply)
            if call.reply is not None else "  " + _("✗ no reply"))
        lines.append((pad if lines else head) + f"→ {call.text}  {_badge_text(call)}{status}")
    for problem in row.problems:
        lines += [pad + f"⚠ {problem.message}", pad + f"  → {problem.explanation}"]
    if row.highlighted:
        lines[0] += "   ◀"
    return lines


def _badge_text(call: _Call) -> str:
    return f"#{call.number if call.number is not None else '?'} {_short_id(call.id)}"


def _text(title: str | None, rows: list[_Row], general: list, summary: str) -> str:
    width = max((len(r.label) for r in rows), default=1)
    lines = [title] if title else []
    for row in rows:
        lines += _text_lines(row, width)
    for problem in general:
        lines += [f"⚠ {problem.message}", f"  → {problem.explanation}"]
    return "\n".join(lines + [summary])


# ----------------------------------------------------------------- HTML

def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _chip(role: str) -> str:
    colour = ROLE_COLOURS.get(role, OTHER_ROLE_COLOUR)
    return (f'<span style="background:{colour};color:#ffffff;border-radius:10px;'
            f'padding:1px 8px;font:600 12px {MONO};white-space:nowrap">{_esc(role)}</span>')


def _badge(call: _Call) -> str:
    colour = CALL_COLOURS[(call.number - 1) % len(CALL_COLOURS)] if call.number else RED
    return (f'<span title="{_esc(call.id)}" style="background:{colour};color:#ffffff;'
            f'border-radius:4px;padding:0 5px;font:12px {MONO};white-space:nowrap">'
            f'{_esc(_badge_text(call))}</span>')


def _call_html(call: _Call, dropped: bool) -> str:
    if dropped:
        status = ""
    elif call.reply is not None:
        answered = _esc(_("✓ answered at [{index}]").format(index=call.reply))
        status = f' <span style="color:#15803d">{answered}</span>'
    else:
        no_reply = _esc(_("✗ no reply"))
        status = f' <span style="color:{RED};font-weight:600">{no_reply}</span>'
    text = f"<del>{_esc(call.text)}</del>" if dropped else _esc(call.text)
    return f'<div style="font-family:{MONO};font-size:13px">→ {text} {_badge(call)}{status}</div>'


def _answers_html(row: _Row) -> str:
    colour = "#374151" if row.paired or row.dropped else RED
    before, _sep, after = _("↳{name} answers {badge}").partition("{badge}")
    return (f'<div style="font-family:{MONO};font-size:13px;color:{colour}">'
            f'{_esc(before.format(name=row.answers.text))}{_badge(row.answers)}'
            f'{_esc(after.format(name=row.answers.text))}</div>')


def _problem_html(problem: ProtocolError) -> str:
    return (f'<div style="color:{RED};margin-top:3px"><b>⚠ {_esc(problem.message)}</b><br>'
            f'→ {_esc(problem.explanation)}</div>')


def _cell(row: _Row) -> str:
    parts = []
    if row.dropped:
        dropped = _esc(_("dropped by trim"))
        parts.append(f'<div style="font-style:italic;font-size:12px;color:{RED}">'
                     f'{dropped}</div>')
    if row.answers is not None:
        parts.append(_answers_html(row))
    if row.text:  # <del> strikes dropped text through even where styles are stripped
        text = f"<del>{_esc(row.text)}</del>" if row.dropped else _esc(row.text)
        font = f"font-family:{MONO};font-size:13px;" if row.role == "tool" else ""
        parts.append(f'<div style="white-space:pre-wrap;{font}">{text}</div>')
    elif not row.calls:
        parts.append('<div style="color:#6b7280;font-style:italic">'
                     + _esc(_("(no content)")) + '</div>')
    parts += [_call_html(c, row.dropped) for c in row.calls]
    parts += [_problem_html(p) for p in row.problems]
    return "".join(parts)


def _tr(row: _Row) -> str:
    background = FAINT if row.problems else HIGHLIGHT if row.highlighted else "#ffffff"
    edge = RED if row.problems else "#ca8a04" if row.highlighted else "transparent"
    fade = "opacity:0.55;" if row.dropped else ""
    td = "padding:4px 8px;text-align:left;vertical-align:top;border-top:1px solid #e5e7eb;"
    return (f'<tr style="background:{background};{fade}">'
            f'<td style="{td}border-left:4px solid {edge};color:#6b7280;font-family:{MONO};'
            f'font-size:12px">[{_esc(row.label)}]</td>'
            f'<td style="{td}">{_chip(row.role)}</td>'
            f'<td style="{td}color:#111827;font-size:14px;overflow-wrap:anywhere">{_cell(row)}</td>'
            '</tr>')


def _html(title: str | None, rows: list[_Row], general: list, summary: str) -> str:
    ok = not general and not any(r.problems for r in rows)
    parts = [f'<div style="font-family:{SANS};color:#111827;background:#ffffff;'
             'border:1px solid #d1d5db;border-radius:6px;padding:6px 8px;'
             'display:inline-block;text-align:left">']
    if title:
        parts.append(f'<div style="font-weight:600;font-size:15px;margin-bottom:4px">'
                     f'{_esc(title)}</div>')
    parts.append('<table style="border-collapse:collapse;table-layout:auto;margin:0">')
    parts += [_tr(r) for r in rows]
    parts.append("</table>")
    parts += [_problem_html(p) for p in general]
    parts.append(f'<div style="font-size:13px;margin-top:4px;color:{"#15803d" if ok else RED}">'
                 f'{_esc(summary)}</div></div>')
    return "".join(parts)


# ----------------------------------------------------------------- views

class _View:
    """Shared display plumbing: HTML for notebooks, text everywhere else."""

    def _repr_html_(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython's plain-text hook
        p.text(str(self))


class MessageView(_View):
    """A picture of a message list (see show_messages)."""

    def __init__(self, messages: Any, *, dropped: Iterable = (), title: str | None = None,
                 highlight: int | Iterable[int] | None = None):
        self.messages = _as_dicts(messages)
        self.dropped = list(dropped)
        self.title = title
        marks = {highlight} if isinstance(highlight, int) else set(highlight or ())
        self.problems = find_problems(self.messages)
        self.rows, self.general = _rows(self.messages, self.dropped, marks, self.problems)
        self.summary = _summary(len(self.messages), len(self.dropped), len(self.problems))

    def _repr_html_(self) -> str:
        return _html(self.title, self.rows, self.general, self.summary)

    def __str__(self) -> str:
        return _text(self.title, self.rows, self.general, self.summary)


def show_messages(messages: Any,           # a list of message dicts, or a ShortTermMemory
                  *, dropped: Iterable = (),  # messages a trim removed (memory.last_dropped)
                  title: str | None = None,   # a caption above the picture
                  highlight: int | Iterable[int] | None = None,  # index(es) to mark
                  ) -> MessageView:
    """The message list as a picture: roles, contents, tool calls tied to their results,
    protocol problems in red, dropped messages struck through."""
    return MessageView(messages, dropped=dropped, title=title, highlight=highlight)


# ----------------------------------------------------------------- source

class SourceView(_View):
    """The real source of a lesson_lib object, syntax-highlighted."""

    def __init__(self, obj: Any):
        self.source = source_of(obj)
        module = getattr(inspect.getmodule(obj), "__name__", "")
        self.name = f"{module}:{getattr(obj, '__qualname__', '')}"  # e.g. lesson_lib.memory:ShortTermMemory

    def _repr_html_(self) -> str:
        caption = (f'<div style="font-family:{MONO};font-size:12px;color:#6b7280">'
                   f'{_esc(self.name)}</div>')
        try:
            from pygments import highlight  # noqa: PLC0415  (optional: plain <pre> without it)
            from pygments.formatters import HtmlFormatter  # noqa: PLC0415
            from pygments.lexers import PythonLexer  # noqa: PLC0415
        except ImportError:
            return caption + f'<pre style="background:#f8f8f8">{_esc(self.source)}</pre>'
        return caption + highlight(self.source, PythonLexer(), HtmlFormatter(noclasses=True))

    def __str__(self) -> str:
        # The first line names the object, so a test can compare what a notebook shows
        # with the library's current source (tests/test_notebooks.py).
        return f"{SOURCE_HEADER}{self.name}\n{self.source}"


SOURCE_HEADER = "# source of "


def source_of(obj: Any) -> str:
    """The source text of a function, class or method, exactly as inspect.getsource gives it."""
    return inspect.getsource(obj)


def show_source(obj: Any) -> SourceView:
    """Show the real source of `obj` (what the lesson teaches is what the library runs)."""
    return SourceView(obj)


# ----------------------------------------------------------------- a request

def _tool_names(tools: Any) -> str:
    if tools is None:
        return _("(none sent)")
    names = [(t.get("function") or {}).get("name", "?") if isinstance(t, Mapping) else "?"
             for t in tools]
    return ", ".join(map(str, names)) or _("[] (empty)")


def _request_line(messages: list, tools: Any, tool_choice: Any) -> tuple[str, ProtocolError | None]:
    choice = _("(not sent)") if tool_choice is None else (
        tool_choice if isinstance(tool_choice, str) else json.dumps(tool_choice))
    countable = all(isinstance(m, Mapping) for m in messages) and (
        tools is None or all(isinstance(t, Mapping) for t in tools))
    tokens = count_request(messages, tools) if countable else "?"
    body = {"model": "-", "messages": messages, "tools": tools, "tool_choice": tool_choice}
    try:
        validate_request(body)
        problem = None
    except ProtocolError as e:  # message problems are already shown on their rows
        problem = None if (e.param or "").startswith("messages") else e
    return _("tools: {tools} · tool_choice: {choice} · {tokens} tokens").format(
        tools=_tool_names(tools), choice=choice, tokens=tokens), problem


class RequestView(_View):
    """What one chat call would send: the messages, the tools, tool_choice, the token count."""

    def __init__(self, messages: Any, tools: Any = None, tool_choice: Any = None,
                 title: str | None = None):
        self.view = MessageView(messages, title=title)
        self.line, self.problem = _request_line(self.view.messages, tools, tool_choice)

    def _repr_html_(self) -> str:
        extra = _problem_html(self.problem) if self.problem else ""
        return (f'<div style="text-align:left">{self.view._repr_html_()}'
                f'<div style="font-family:{MONO};font-size:13px;margin-top:4px">'
                f'{_esc(self.line)}</div>{extra}</div>')

    def __str__(self) -> str:
        extra = (f"\n⚠ {self.problem.message}\n  → {self.problem.explanation}"
                 if self.problem else "")
        return f"{self.view}\n{self.line}{extra}"


def show_request(messages: Any,           # what the call sends as messages (list or memory)
                 tools: list | None = None,  # the tools schema list, or None
                 tool_choice: Any = None,    # "auto", "none", "required", {"type": ...}, or None
                 *, title: str | None = None) -> RequestView:
    """A compact view of one request: messages, tools, tool_choice and its token count
    (lesson_lib.tokens.count_request)."""
    return RequestView(messages, tools, tool_choice, title)


# ----------------------------------------------------------------- side by side

def _as_view(view: Any) -> Any:
    if hasattr(view, "_repr_html_"):
        return view
    return show_messages(view)  # a plain message list, or a memory


class SideBySide(_View):
    """Views placed next to each other (HTML), or one after the other (text)."""

    def __init__(self, views: Iterable, titles: Iterable[str] | None = None):
        self.views = [_as_view(v) for v in views]
        self.titles = list(titles) if titles is not None else [""] * len(self.views)
        if len(self.titles) != len(self.views):
            raise ValueError(f"side_by_side got {len(self.views)} views but "
                             f"{len(self.titles)} titles: give one title per view")

    def _repr_html_(self) -> str:
        th = ("padding:4px 8px;text-align:left;vertical-align:bottom;font-weight:600;"
              "font-size:15px;background:#ffffff;color:#111827")
        td = "padding:4px 8px;text-align:left;vertical-align:top;background:#ffffff"
        head = "".join(f'<th style="{th}">{_esc(t)}</th>' for t in self.titles)
        cells = "".join(f'<td style="{td}">{v._repr_html_()}</td>' for v in self.views)
        head_row = f"<tr>{head}</tr>" if any(self.titles) else ""
        return (f'<table style="border-collapse:collapse;table-layout:auto;margin:0">'
                f'{head_row}<tr>{cells}</tr></table>')

    def __str__(self) -> str:
        parts = []
        for title, view in zip(self.titles, self.views, strict=True):
            parts.append((f"── {title} ──\n" if title else "") + str(view))
        return "\n\n".join(parts)


def side_by_side(*views: Any,              # MessageViews, message lists or memories
                 titles: Iterable[str] | None = None,  # one heading per view
                 ) -> SideBySide:
    """Views next to each other, e.g. the two calls of notebook 01 (forgets / remembers)."""
    return SideBySide(views, titles)
