"""Running strategies over the benchmark through the real openai SDK, the requests recorded on the wire, and the table and plot of the results.

`run(make, data)` replays each conversation to a fresh strategy (`make(context)`), asks
each question at the start of its session, sends the strategy's request to the model with
the `openai` SDK (the offline model by default, a real provider with
`LESSON_BACKEND=openai`), and scores *the body that went out* (lesson_lib.membench.score):
a transport under the SDK records every request body, so what is scored is what the
model was sent, not what the strategy meant to send. `send=False` scores the request as
built, without a model call (the tests' fast path).

`table(results)` is one table: per strategy, evidence found per category (abstention:
nothing misleading sent), per language (en, zh, mixed), in all, and the mean tokens per
request and milliseconds per question. `plot(results)` draws evidence found against
tokens per request, one panel per category, one marker per language.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.i18n import _
from lesson_lib.membench.data import CATEGORIES, LANGUAGES
from lesson_lib.membench.score import judge_answer, score_request
from lesson_lib.membench.strategies import STRATEGIES, Context, Strategy, VectorCache, unknown
from lesson_lib.text import columns, cut, pad

ROUTES = ("/chat/completions", "/responses", "/responses/compact")


class Recorder:
    """An httpx transport that writes down the JSON body of every model request, then
    hands the request to the transport under it."""

    def __init__(self, inner: Any):
        self.inner, self.bodies = inner, []

    def handle_request(self, request: Any) -> Any:
        if request.method == "POST" and request.url.path.endswith(ROUTES):
            self.bodies.append(json.loads(request.read() or b"{}"))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def recording_client() -> tuple[Any, str, Recorder]:
    """A client of the backend the environment chooses (lesson_lib.llm's rule), whose
    requests are recorded: (client, model, recorder)."""
    import httpx  # noqa: PLC0415
    import openai  # noqa: PLC0415

    from lesson_lib import llm  # noqa: PLC0415

    if llm.backend_name() == "offline":
        from lesson_lib.offline import BASE_URL, MODEL_ID, OFFLINE_API_KEY  # noqa: PLC0415
        from lesson_lib.offline.state import MemoryState  # noqa: PLC0415
        from lesson_lib.offline.transport import OfflineTransport  # noqa: PLC0415

        recorder = Recorder(OfflineTransport(None, MemoryState()))
        client = openai.OpenAI(api_key=OFFLINE_API_KEY, base_url=BASE_URL, max_retries=0,
                               http_client=openai.DefaultHttpxClient(transport=recorder))
        return client, MODEL_ID, recorder
    llm.get_client()  # the environment's checks (a key is set), worded for the learner
    recorder = Recorder(httpx.HTTPTransport())
    client = openai.OpenAI(base_url=os.environ.get("OPENAI_BASE_URL") or None,
                           http_client=openai.DefaultHttpxClient(transport=recorder))
    return client, llm.model_name(), recorder


@dataclass
class Results:
    """One strategy's run: a row per question (score.score_request's), and its totals."""
    name: str
    rows: list[dict] = field(default_factory=list)
    seconds: float = 0.0        # the whole run: replaying, building, sending
    model_calls: int = 0        # every request the run made (the strategy's own included)


def _send(client: Any, model: str, recorder: Recorder, request: Any) -> tuple[Any, str]:
    """Send `request` as it is: (the body that went out, the answer's text)."""
    before = len(recorder.bodies)
    if isinstance(request, Mapping):  # a Responses body
        response = client.responses.create(model=model, **request)
        answer = response.output_text
    else:
        response = client.chat.completions.create(model=model, messages=request,
                                                  temperature=0)
        answer = response.choices[0].message.content or ""
    return recorder.bodies[before], answer


def name_of(make: Any) -> str:
    return getattr(make, "strategy_name", None) or getattr(make, "name", None) or \
        getattr(make, "__name__", "strategy")


def run(make: Callable[[Context], Strategy] | str,   # a factory (a Strategy class), or a name
        data: Mapping,                               # membench.load(...)
        *, send: bool = True,      # False: score the request as built, without a model call
        judge: bool | None = None,  # judge the answers (None: only with a real provider)
        folder: str | None = None,  # where the run's session store goes (None: a temp dir)
        name: str | None = None,
        embedder: VectorCache | None = None) -> Results:  # None: the process's shared cache
    """Replay every conversation of `data` to a fresh strategy and score each question."""
    if isinstance(make, str):
        if make not in STRATEGIES:
            raise unknown(make)
        make = STRATEGIES[make]
    from lesson_lib.llm import backend_name  # noqa: PLC0415

    if judge is None:
        judge = send and backend_name() == "openai"
    client, model, recorder = recording_client()
    embedder = embedder or vectors()
    results = Results(name or name_of(make))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=folder) as where:
        store = None
        for conv in data["conversations"]:
            context = Context(conv["id"], client, model, where, store, embedder)
            strategy = make(context)
            asked: dict[str, list[dict]] = {}
            for q in conv["questions"]:
                asked.setdefault(q["session"], []).append(q)
            for session in conv["sessions"]:
                strategy.start_session(session["id"], session["date"])
                for q in asked.get(session["id"], []):
                    began = time.perf_counter()
                    request = strategy.request(q["question"])
                    took = time.perf_counter() - began
                    answer = None
                    if send:
                        request, answer = _send(client, model, recorder, request)
                    row = score_request(q, request, took)
                    row["request"] = request  # what went out: misses() shows it
                    if judge:
                        row["answer"], row["correct"] = answer, judge_answer(q, answer)
                    results.rows.append(row)
                for m in session["messages"]:
                    strategy.take({k: v for k, v in m.items() if k != "id"})
                strategy.end_session()
            store = context._store
        if store is not None:
            store.close()
    results.seconds = time.perf_counter() - started
    results.model_calls = len(recorder.bodies)
    return results


_VECTORS: dict[str, VectorCache] = {}


def vectors() -> VectorCache:
    """The process's vector cache for the embedder the environment chooses."""
    cache = VectorCache()
    return _VECTORS.setdefault(cache.name, cache)


def warm(data: Mapping) -> None:
    """Embed every text retrieval may look up in `data` (messages, questions) at once,
    before the runs: the strategies' times are then their own work, not the embedder's."""
    from lesson_lib.longterm import masked  # noqa: PLC0415

    texts = [m["content"] for conv in data["conversations"] for s in conv["sessions"]
             for m in s["messages"] if m["role"] in ("user", "tool") and m.get("content")]
    # and the texts, values masked, that updates by meaning compare (longterm.same_thing)
    compared = [" ".join(masked(t).strip().casefold().split()) for t in texts]
    vectors().warm([*texts, *compared, *(q["question"] for conv in data["conversations"]
                                         for q in conv["questions"])])


def run_all(data: Mapping, names: Iterable[str] | None = None, **kw: Any) -> list[Results]:
    """`run` for each strategy of STRATEGIES (or those `names`), in order."""
    return [run(STRATEGIES[n] if n in STRATEGIES else n, data, name=n, **kw)
            for n in (names or STRATEGIES)]


# ----------------------------------------------------------------- the table

def rate(rows: Sequence[dict]) -> tuple[int, int]:
    """(scored, out of): found for answerable rows, abstained for abstention ones."""
    hits = [r["found"] if r["found"] is not None else r["abstained"] for r in rows]
    return sum(hits), len(hits)


def percent(rows: Sequence[dict]) -> str:
    got, out_of = rate(rows)
    return f"{100 * got / out_of:.0f}%" if out_of else "-"


def figures(results: Results) -> dict[str, Any]:
    """A run's numbers: each category's and language's (scored, out of), the answerable
    questions' in all, mean tokens per request, mean milliseconds per question."""
    rows = results.rows
    out: dict[str, Any] = {c: rate([r for r in rows if r["category"] == c]) for c in CATEGORIES}
    out |= {lang: rate([r for r in rows if r["lang"] == lang]) for lang in LANGUAGES}
    out["found"] = rate([r for r in rows if r["category"] != "abstention"])
    out["tokens"] = sum(r["tokens"] for r in rows) / max(len(rows), 1)
    out["ms"] = 1000 * sum(r["seconds"] for r in rows) / max(len(rows), 1)
    out |= {f"tokens {lang}": sum(r["tokens"] for r in rows if r["lang"] == lang)
            / max(1, sum(r["lang"] == lang for r in rows)) for lang in LANGUAGES}
    return out


SHORT = {"single": "single", "spread": "spread", "update": "update", "temporal": "time",
         "preference": "pref", "abstention": "abstain"}


def table(results: Sequence[Results], *, times: bool = True) -> str:
    """One table: a row per strategy; evidence found per category (abstain: nothing
    misleading sent), per language (of all its questions), in all (answerable), then mean
    tokens per request, per language, and milliseconds per question (`times=False`
    leaves that last column out: a saved notebook's output must not change run to run)."""
    head = [_("strategy"), *SHORT.values(), "en", "zh", "mixed", _("found"), _("tokens"),
            "tok en", "tok zh", "tok mx", "ms/q"][:None if times else -1]
    body = []
    for r in results:
        f, rows = figures(r), r.rows
        body.append([r.name,
                     *(percent([x for x in rows if x["category"] == c]) for c in CATEGORIES),
                     *(percent([x for x in rows if x["lang"] == lang]) for lang in LANGUAGES),
                     percent([x for x in rows if x["category"] != "abstention"]),
                     f"{f['tokens']:.0f}", *(f"{f[f'tokens {lang}']:.0f}" for lang in LANGUAGES),
                     f"{f['ms']:.1f}"][:None if times else -1])
    counts = results[0].rows if results else []
    note = _("{n} questions ({by}); found: the answerable ones' evidence all sent; abstain: "
             "no decoy sent; tokens: mean per request").format(
        n=len(counts), by=", ".join(
            f"{SHORT[c]} {sum(x['category'] == c for x in counts)}" for c in CATEGORIES))
    widths = [max(columns(row[k]) for row in [head, *body]) for k in range(len(head))]
    lines = ["  ".join(pad(cell, widths[k], right=k > 0) for k, cell in enumerate(row))
             for row in [head, *body]]
    return "\n".join([*lines, note])


# ----------------------------------------------------------------- the misses

def misses(results: Results, data: Mapping, *, category: str | None = None,
           lang: str | None = None, limit: int = 3, width: int = 110) -> str:
    """The questions a run lost, from its records (of `category`, `lang` when given; at
    most `limit`): each question, what it needed (its facts; abstention: what it must not
    send) and what was sent instead, the request as the model read it, a line a message."""
    from lesson_lib.membench.data import questions  # noqa: PLC0415
    from lesson_lib.membench.score import as_messages  # noqa: PLC0415

    asked = {q["id"]: q for q in questions(data)}
    lost = [r for r in results.rows
            if (r["found"] is False or r["abstained"] is False)
            and category in (None, r["category"]) and lang in (None, r["lang"])]
    out = [_("{name}: {n} questions lost{where}").format(
        name=results.name, n=len(lost),
        where=f" ({', '.join(x for x in (category, lang) if x)})" if category or lang else "")]
    for r in lost[:limit]:
        q = asked[r["id"]]
        if r["category"] == "abstention":
            said = _("  must not send: {decoys}; sent: {sent}").format(
                decoys=", ".join(q["decoys"]), sent=", ".join(r["decoys_sent"]))
        else:
            gone = [f for f in q["facts"] if f not in r["facts_sent"]]
            said = _("  needs: {facts}; missing: {gone}").format(
                facts=", ".join(q["facts"]), gone=", ".join(gone))
        out += ["", f"{r['id']} [{r['category']}, {r['lang']}] {q['question']}", said,
                _("  sent instead ({tokens} tokens):").format(tokens=r["tokens"])]
        for m in as_messages(r.get("request") or []):
            lines = [" ".join(part.split()) for part in str(m["content"] or "").splitlines()]
            for k, line in enumerate(part for part in lines if part):
                line = f"    {m['role'] if k == 0 else ' ' * len(m['role'])}  {line}"
                out.append(line if columns(line) <= width else _clip(line, width))
    if len(lost) > limit:
        out += ["", _("… and {n} more questions").format(n=len(lost) - limit)]
    return "\n".join(out)


def _clip(line: str, width: int) -> str:
    return cut(line, width - 1) + "…"


# ----------------------------------------------------------------- the plot

class BenchPlot:
    """The plot, shown by a notebook (PNG), or saved with .png()."""

    def __init__(self, figure: Any):
        self.figure = figure

    def png(self) -> bytes:
        import io  # noqa: PLC0415

        out = io.BytesIO()
        self.figure.savefig(out, format="png")  # Chinese from Noto Sans SC (lesson_lib.fonts)
        return out.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()


MARKERS = {"en": "o", "zh": "s", "mixed": "^"}


def font_families() -> list[str]:
    """Matplotlib's default family, then Noto Sans SC, which installs with the project
    (lesson_lib.fonts): Chinese titles and strategy names are drawn with it, glyph by
    glyph, where the default has none."""
    from lesson_lib.fonts import ready  # noqa: PLC0415

    ready()
    from matplotlib import rcParams  # noqa: PLC0415

    return list(rcParams["font.family"])


def plot(results: Sequence[Results]) -> BenchPlot:
    """Evidence found (%) against tokens per request: a panel per category (abstention:
    nothing misleading sent), a colour per strategy, a marker per language (circle en,
    square zh, triangle mixed)."""
    from matplotlib import colormaps  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415

    from lesson_lib.costs import _figure  # noqa: PLC0415

    figure = _figure()
    figure.set_size_inches(13, 7)
    family = font_families()
    axes = figure.subplots(2, 3, sharex=True, sharey=True)
    palette = colormaps["tab20"].colors
    colours = [palette[(2 * k) % 20 + (2 * k) // 20 % 2] for k in range(len(results))]
    for ax, category in zip(axes.flat, CATEGORIES, strict=True):
        for colour, r in zip(colours, results, strict=True):
            for lang, marker in MARKERS.items():
                rows = [x for x in r.rows if x["category"] == category and x["lang"] == lang]
                if not rows:
                    continue
                got, out_of = rate(rows)
                tokens = sum(x["tokens"] for x in rows) / len(rows)
                ax.scatter(tokens, 100 * got / out_of, color=colour, marker=marker, s=30,
                           alpha=0.85)
        ax.set_title(_(CATEGORIES[category]), family=family)
        ax.set_ylim(-5, 105)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel(_("tokens per request"), family=family)
    for ax in axes[:, 0]:
        ax.set_ylabel(_("evidence found (%)"), family=family)
    axes.flat[-1].set_ylabel(_("nothing misleading sent (%)"), family=family)
    axes.flat[-1].yaxis.set_tick_params(labelleft=True)
    handles = [Line2D([], [], color=colour, marker="o", linestyle="", label=r.name)
               for colour, r in zip(colours, results, strict=True)]
    handles += [Line2D([], [], color="grey", marker=marker, linestyle="", label=lang)
                for lang, marker in MARKERS.items()]
    figure.legend(handles=handles, loc="outside right center",
                  prop={"family": family, "size": 8})
    return BenchPlot(figure)
