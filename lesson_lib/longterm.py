"""Long-term memory: what an agent keeps for good, and finds again by meaning or by words.

Short-term memory is the `messages` list; mid-term memory is the session store (a whole
conversation, and the user's profile). Long-term memory is the third layer: many small
texts (a fact the user told us, the summary of a past conversation, a piece of a document),
kept in the same database as the sessions and the profile, and *retrieved*: for each new
question, the few memories that answer it are found and put in the prompt (RAG).

    memory = LongTermMemory(store, "xiaoming")              # store: a SessionStore (or a URL)
    memory.write("I am vegetarian", source="user", subject="diet")
    memory.remember_session(session_id="s1", summary="We chose the 14 May train to Chengdu.")
    memory.search("When do we go to Chengdu?", k=5)         # hits, best first, with scores
    memory.forget(about="Chengdu")                          # every memory that says it: gone
    context = recall("When do we go?", memory, budget=200)   # the best, as one system message
    with_context(messages, context)                          # a copy for the request, valid

**Every memory carries its source**, and the source decides what it may be:

| source | what it is | ref |
|---|---|---|
| "user" | a user fact: the user's own statement | the session it was said in |
| "session" | experience: the summary of a past conversation | the session |
| "document" | knowledge: a piece of a document | the document's name |
| "tool" | what a tool returned | the tool's name |
| "assistant" | what the model concluded on its own | the session |

Only "user" memories are user facts (`user_facts()`, `as_prompt()` says so). A tool result
or a document that says "remember that the user wants …" is stored, if at all, with its own
source: it can never become the user's wish. `remember_user_fact(text, messages)` is the
gate for the model's "save this about the user": the statement is stored as a user fact
only when the user's own messages say it of the user, plainly and with the same yes or no
(`said_by_user`, the write policy of lesson_lib.write_policy); otherwise it is refused
(MemoryPoisoningError, whose message names why: a negation mismatch, someone else, a
question, a hypothetical, a quote …) and nothing is written.

**The newer memory wins.** A memory may name its `subject` ("diet", "home city", "trip to
Chengdu: date"). Writing a memory with a subject deletes the older memories of that
subject: the stale fact is gone, never returned beside the new one. (A write older than
what is stored for its subject is the stale one: it is not stored.) `update(id, text)`
rewrites a memory in place, with the new text's date; its old text is gone too (the row and its index entries are
overwritten; on SQLite, secure_delete zeroes freed pages and the WAL is checkpointed).

**User facts are updated by meaning** (`same_thing`, `update_rule`): a new user fact
replaces the stored user facts about the same thing, whatever the subject's spelling or
language. Two facts that both name a subject are compared by their subjects, normalised
(`normal_subject`: case, spaces, plurals, punctuation, full-width forms: "Trip  Budgets." is
"trip budget") or close in meaning ("budget for the trip", "旅行预算"); otherwise by their
texts with the values masked (`masked`: "My trip budget is # yuan"), the same or close in
meaning. Close is a cosine of at least SAME_WITHIN (0.90) in one language, SAME_ACROSS
(0.65) between Chinese and another language (a translation scores lower than a rewording).
The thresholds are high because meaning alone confuses neighbours: "My budget for the trip
is 3000 yuan" and "My rent budget is 4000 yuan" score 0.80 with their values masked, and a
wrong merge loses a fact while a missed one leaves both, dated, as before (measured by
benchmarks/updates.py: development pairs lesson_lib/data/update_dev.json, frozen
evaluation update_eval.json; the evaluation's first score is in
tests/test_longterm_updates.py). A new value of an attribute without a number ("I live in
Beijing" → "I moved to Shanghai") is mostly missed: name a subject for such facts.

Replace, not supersede: the oldest matching row is rewritten in place (new text, vector,
index entries and the newer date; the others are deleted), so the stale text is gone from
the table and the index, as `update()` leaves it, and no search needs a filter for
superseded rows. A fact said earlier than a stored one about the same thing is stale and
not stored (None); writing the same fact twice keeps one memory, with the newer date.
Other sources keep the subject rule alone (a document is not a user's changing mind).
`consolidate()` merges session summaries about the same thing into one: the newest text
and date, with every session's id in its ref (one per line), so forgetting any of those
sessions (lesson_lib.forgetting) still deletes what was derived from it.

Memories without a subject that are not the same thing by this rule stay side by side;
hits carry their dates, a search gives equal scores to the newer memory first, and
`as_prompt()` tells the model that the newer one is right.

**Deleting is for good, and provable.** `delete(id)`, `forget(about=…)` (every memory whose
words include all of `about`'s words: the lexical index, never similarity, decides what a
deletion takes) and `clear()` remove the rows, their vectors and their lexical index
entries; `mentions(text)` then counts what still says it (the table, and the index's own
vocabulary), and answers 0.

**Three ways to search** (`method=`), compared by longterm_eval.py:

- "lexical": words. The database's own full-text index: SQLite's FTS5 (BM25 ranking) or
  PostgreSQL's (a GIN index, ranked by ts_rank). Texts are cut into terms here first
  (`lesson_lib.terms.terms()`): English words lower-cased, stop words dropped, a light suffix stemming;
  Chinese, which has no spaces, as overlapping character pairs ("我喜欢喝咖啡" → 我喜 喜欢
  欢喝 喝咖 咖啡), so "咖啡" finds it (FTS5's unicode61 tokenizer would keep the whole run
  as one word, and its trigram tokenizer misses two-character queries).
- "dense": meaning. Each memory's vector (lesson_lib.embeddings) is stored with it; the
  vectors of the user's memories are also kept in a numpy matrix in the process, and a
  search is one matrix-vector product and a partial sort. The matrix follows the database:
  every write is also logged (`memory_changes`: ids only), and a search first applies what
  changed since it last looked, so another process's delete is seen at once.
- "fused" (the default): reciprocal rank fusion of the two lists, score = Σ 1 / (60 + rank),
  memories tied in a list sharing the mean of their positions. Its dense list is balanced
  across scripts: a Chinese question's cosines to every Chinese text run higher than to
  any English one (and the reverse), so each memory is ranked by its cosine less its
  script's level for that question, the mean of the BALANCE (10) best cosines among the
  memories written in its script (the neighbourhood term of CSLS, Conneau et al. 2018);
  `Hit.dense` and `min_score` still read the plain cosine. Both were chosen on
  development cases (benchmarks/crosslang_dev.json among 20,000 distractors: 109 → 123 of
  132) and raised the frozen cross-language set among 20,000 distractors from 0.816 to
  0.886 (benchmarks/crosslang.py has every score).
  A memory found by words but outside the dense candidates gets nothing from that list, so
  one first by words can fall behind memories found by both ("the cliff"). Ranking it in
  the dense list by its own cosine removes the cliff but was measured to cost more: on the
  frozen cross-language set (benchmarks/crosslang.py) recall@5 fell from 146 to 142 of 158,
  as distractors that share a word gained dense credit over answers in the other language,
  which share none. The cliff stays until a fusion beats both.
  Letting a memory found by words vote only when its cosine is at least half the best
  candidate's was tried too (2026-12-05) and undone: alone the frozen cross-language set
  rose 147 → 151 of 158, but among 20,000 distractors it fell 129 → 128, and a question
  that asks two things lost memories that share its words but only half its meaning (the
  memory benchmark's "spread" questions; benchmarks/crosslang.py has the figures).
  Weighting the lexical list less (0.5; 0.25 for a question with Chinese characters, chosen
  on benchmarks/crosslang_dev.json) was tried and undone: it raised the frozen
  cross-language set (alone 0.930 → 0.949, among 20,000 distractors 0.816 → 0.835), but on
  longterm_eval's questions among 100,000 memories (benchmarks/longterm.py, a quiet machine)
  fused recall@5 fell from 0.959 (en 0.917, zh 1.000) to 0.866 (en 0.771, zh 0.959), below
  words alone (0.897): in a large memory the words are what finds an English name or number.

A floor, `min_score` (a least cosine), lets "fused" and "dense" say "nothing": below it a
memory is not a hit, so a question nothing is near gets [] and `recall` sends no context.
It is off by default (MIN_SCORE = None): measured on a frozen set (benchmarks/abstain.py,
33 answerable and 33 unanswerable questions, en/zh/mixed), a cosine floor cannot tell a
near miss from an answer. At ABSTAIN_FLOOR = 0.18, chosen on development cases, it kept
32 of 33 answers but gave nothing to only 9 of 33 unanswerable questions (a cat question
still finds an uncle's hamster at 0.315); at 0.29 it gave nothing to 29 of 33 but lost 6
answers, cross-language ones first. Pass min_score=ABSTAIN_FLOOR (or your own) to use it.

Why fused, from the measurements (longterm_eval.py's 97 answerable questions, recall@5;
benchmarks/longterm.py; the offline embedder since issue 24, the multilingual Universal
Sentence Encoder): on the 49 evaluation memories alone the three are close (fused 1.00,
dense 0.98, lexical 0.92); among invented distractors the offline model's vectors lose
their way (dense 0.91 at 1,000 memories, 0.83 at 100,000) while words hold (lexical 0.90)
and fusion holds best (0.96 at 1,000 and at 100,000, 0.97 at 100,000 once its dense list
was balanced across scripts; Chinese 1.00 throughout).
Each method fails on different questions: dense on rare names and numbers, lexical on
paraphrases with no word in common ("Should I bring rain gear?" / "pack an umbrella").

Speed (2 cores; benchmarks/longterm.py): a fused search is a few milliseconds up to 10,000
memories. At 100,000 the float32 vectors are 100 MB, and reading them all for each question
took 12 ms of one core; so a big matrix keeps a rough int8 copy beside it (a quarter of the
bytes, each row with its own scale and its own error bound), scanned by two threads while
the lexical index is asked in a third; then only the rows whose rough score could still
reach the best are scored again from the float32 rows (a few hundred). The hits are the
exact scan's (equal scores: the newer memory first), and the results stay deterministic.
Approximate indexes (HNSW, IVF) were measured in its place (benchmarks/ann.py, 100,000
memories): a graph index lost half of the exact top 5 before it was much faster, and an
IVF index that kept the fused recall saved only a few milliseconds of a search whose
question embedding and reading take as long as the scan. The lexical side ranks up to
LEXICAL_BUDGET memories by BM25 with the user's own statistics, found in one string of all
their terms (one scan per word of the question, counted per memory by numpy): its slowest
questions, those whose words hold a thousand memories or more, went from 24 to 14 ms p99.

Tables (beside the session store's): `memories` (id, user_id, source, ref, subject, text,
terms, created_at, updated_at, model, vector), `memory_changes` (seq, user_id, memory_id),
and on SQLite the FTS5 table `memories_fts` (the terms; its rowid is the memory's id).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

from lesson_lib import write_policy
from lesson_lib.i18n import N_, _
from lesson_lib.sessions import SessionStore, StoreError
from lesson_lib.storage import _check_text, _now, _sa, check_storable
from lesson_lib.terms import chinese, terms

SOURCES = {  # source: what a memory of that source is (said in the language spoken: _())
    "user": N_("a user fact (the user's own words)"),
    "session": N_("experience (a past conversation's summary)"),
    "document": N_("knowledge (a document)"),
    "tool": N_("a tool's result"),
    "assistant": N_("the model's own note"),
}
METHODS = ("fused", "dense", "lexical")
DEFAULT_METHOD = "fused"
RRF_K = 60            # reciprocal rank fusion's constant (Cormack et al., 2009)
CANDIDATES = 50       # each list's length before fusion (at least 4 × k)
MIN_SCORE = None      # search's and recall's default floor: none (see the module docstring)
ABSTAIN_FLOOR = 0.18  # the measured floor for the offline embedder, chosen on development
# cases only (benchmarks/abstain.py --sweep):
# the highest floor (in steps of 0.02) at which each development set still finds at least
# 96% of the answers it found without a floor: lesson_lib/data/abstain_dev.json (small
# stores), benchmarks/crosslang_dev.json (46 memories) and longterm_eval.json (49).
# In abstain_dev's small stores the answers' cosines are 0.30 to 0.71 and the best memory
# for a question nothing answers 0.08 to 0.28, but in the bigger stores answers (names,
# numbers, paraphrases) go down to 0.15: 0.29 found 106 of crosslang_dev's 129, 0.22 found
# 42 of longterm_eval's 48 English answers. At 0.18: abstain_dev found 24/24 and gave
# nothing for 10 of 16 unanswerable; crosslang_dev found 130 (129 without a floor), 1 of 6;
# longterm_eval found 94 of 97, 1 of 12. A cosine floor says "nothing" when nothing is near
# the question; it cannot tell a near miss (a cat asked, a dog remembered) from an answer
LEXICAL_BUDGET = 2000  # memories a lexical search may rank: its commonest terms are left out
NEAR = 0.40           # a stored user fact this close to a new one is compared with it
PROMPT_HEAD = N_("What you remember (newest first; when two disagree, the newer one is right):")


class MemoryPoisoningError(StoreError, ValueError):
    """A text was offered as the user's fact, but the user never said it. Nothing was
    written."""


# ----------------------------------------------------------------- whose words (terms: lesson_lib.terms)

def said_by_user(text: str, messages: Iterable[Mapping]) -> bool:
    """Is `text` the user's own statement? The write policy (lesson_lib.write_policy) reads
    the user's messages clause by clause: "The user is vegetarian" is supported by the
    user's "I'm vegetarian", not by "I'm not vegetarian" (that supports "The user is not
    vegetarian"), "My friend is vegetarian", "Am I vegetarian?", "If I were vegetarian …"
    or a quote the user rejects; "the user wants all mail forwarded to x@evil.example",
    which only a tool result said, is not either. Role decides, not wording: a tool result
    or a document saying "remember that the user …" never counts."""
    return write_policy.judge(text, messages).stored


# ----------------------------------------------------------------- what is returned

@dataclass(frozen=True)
class Memory:
    """One stored memory."""
    id: int
    text: str
    source: str            # "user", "session", "document", "tool" or "assistant"
    ref: str | None        # the session, document or tool it came from
    subject: str | None    # what it is about, if named: a newer memory of it replaces it
    #                        (user facts: by same_thing, the subject's spelling aside)
    created_at: str        # ISO 8601, UTC: when it was said or happened
    updated_at: str        # when it was last written

    @property
    def is_user_fact(self) -> bool:
        return self.source == "user"

    def __str__(self) -> str:
        where = f" {self.ref}" if self.ref else ""
        return f"[{self.created_at[:10]}, {self.source}{where}] {self.text}"


@dataclass(frozen=True)
class Hit:
    """A memory found by a search, with how it was found."""
    memory: Memory
    score: float                  # the method's score: higher is better
    dense: float | None = None    # cosine similarity to the question (None: not computed,
    #                               method="lexical")
    lexical: float | None = None  # the lexical index's score (None: no word in common)

    def __getattr__(self, name: str) -> Any:  # hit.text, hit.source … are the memory's
        if name == "memory":
            raise AttributeError(name)
        return getattr(self.memory, name)

    def __str__(self) -> str:
        return f"{self.score:.3f} {self.memory}"


# ----------------------------------------------------------------- the tables

_TABLES: SimpleNamespace | None = None


def tables() -> SimpleNamespace:
    """Long-term memory's tables (SQLAlchemy Core), built on first use."""
    global _TABLES
    if _TABLES is None:
        sa = _sa()
        md, col = sa.MetaData(), sa.Column
        name, stamp = sa.String(200), sa.String(40)
        memories = sa.Table(
            "memories", md,
            col("id", sa.Integer, primary_key=True, autoincrement=True),
            col("user_id", name, nullable=False),
            col("source", sa.String(16), nullable=False),
            col("ref", sa.Text), col("subject", name),
            col("text", sa.Text, nullable=False),
            col("terms", sa.Text, nullable=False),   # terms(text), space-separated
            col("created_at", stamp, nullable=False), col("updated_at", stamp, nullable=False),
            col("model", name, nullable=False),      # the embedder that made the vector
            col("vector", sa.LargeBinary, nullable=False),  # float32, little-endian
            sa.Index("memories_by_user", "user_id", "subject"),
            sqlite_autoincrement=True,  # ids are never reused: a deleted id stays deleted
        )
        changes = sa.Table(
            "memory_changes", md,
            col("seq", sa.Integer, primary_key=True, autoincrement=True),
            col("user_id", name, nullable=False), col("memory_id", sa.Integer, nullable=False),
            sa.Index("memory_changes_by_user", "user_id", "seq"),
        )
        _TABLES = SimpleNamespace(metadata=md, memories=memories, changes=changes)
    return _TABLES


def _tsvector(column: Any) -> Any:
    """PostgreSQL: the terms as a tsvector, taken as they are (no parser, no dictionary)."""
    sa = _sa()
    return sa.func.array_to_tsvector(sa.func.string_to_array(column, " "))


def _create(store: SessionStore) -> None:
    """The tables and the lexical index, if missing (once per database and process)."""
    sa, t = _sa(), tables()
    with store._writing() as conn:
        if store.dialect == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(7368521)"))
        t.metadata.create_all(conn)
        if store.dialect == "sqlite":
            try:
                conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING "
                                     "fts5(terms, tokenize = 'unicode61')")
            except sa.exc.OperationalError as e:  # pragma: no cover - SQLite without FTS5
                raise StoreError(_("this Python's SQLite has no FTS5, which long-term "
                                   "memory's lexical index needs: use a Python whose sqlite3 "
                                   "has it (python.org, conda, Debian all do)")) from e
        else:
            conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS memories_terms ON memories "
                                 "USING gin (array_to_tsvector(string_to_array(terms, ' ')))")


_SECURE: dict[str, bool] = {}


def _secure_delete(store: SessionStore) -> bool:
    """Does this database's FTS5 remove deleted entries at once (SQLite 3.44+)?"""
    if store.where not in _SECURE:
        try:
            with store._writing() as conn:
                conn.exec_driver_sql("INSERT INTO memories_fts (memories_fts, rank) "
                                     "VALUES ('secure-delete', 1)")
            _SECURE[store.where] = True
        except StoreError:
            _SECURE[store.where] = False
    return _SECURE[store.where]


# ----------------------------------------------------------------- the vectors in memory

GEMV_ROWS = 1024  # measured: a whole 10,000 × 256 matrix-vector product made OpenBLAS start
                 # its threads and took 4.5 ms on a busy 2-core machine; in 1,024-row pieces,
                 # 0.45 ms (at 100,000 rows the single thread reads memory as fast as two)
SCAN_APART = 16   # from this many pieces on (16,384 rows), a second thread scores pieces too,
                 # and the rough int8 copy is scanned instead of the float32 matrix
SLACK = 1e-4      # added to each row's error bound: float32 rounding of both scores
BALANCE = 10      # a script's level: the mean of its this many best cosines (CSLS's K, the
                 # value of its paper; on the development cases 3 to 10 gave the same recall)
SAMPLE = 2048     # evenly spread rows whose rough scores bound the n-th best first (_contenders)


class _Matrix:
    """The user's vectors as one float32 matrix, kept in step with the database by the
    change log: rows are added at the end; a deleted row is filled with the last one.

    Beside it, a rough copy a quarter of its size: each row as int8 codes times the row's
    own scale (its largest component / 127), how far the copy is from the row (the length
    of the difference, `error`) and the copy's own length (`length`). A question is made
    rough the same way, and the two int8 vectors are multiplied by `simsimd` (integer
    SIMD, a few times faster than numpy's float32 product). Since
    row·q - rough_row·rough_q = (row - rough_row)·q + rough_row·(q - rough_q),
    a rough score differs from the exact one by at most
    error × |q| + length × |q - rough_q| (Cauchy-Schwarz), so a big matrix is searched
    exactly in two steps: the rough copy is scanned, and only the rows whose rough score
    could still reach the n-th best are scored again from the float32 rows (at 100,000
    memories, a few hundred). The result is the exact scan's."""

    def __init__(self, dimensions: int):
        import numpy as np  # noqa: PLC0415

        self.np = np
        self.matrix = np.zeros((64, dimensions), dtype=np.float32)
        self.codes = np.zeros((64, dimensions), dtype=np.int8)  # the rough copy
        self.scale = np.zeros(64, dtype=np.float32)             # row ≈ codes × scale
        self.error = np.zeros(64, dtype=np.float32)             # |row - codes × scale|
        self.length = np.zeros(64, dtype=np.float32)            # |codes × scale|
        self.ids = np.zeros(64, dtype=np.int64)
        self.han = np.zeros(64, dtype=bool)                      # written in Chinese?
        self.scripts: Any = None  # (rows not in Chinese, rows in Chinese), made when needed
        self.row: dict[int, int] = {}
        self.stale: set[int] = set()  # memories whose rough copy is still to be made
        self.seq = -1  # the last change applied; -1: not loaded yet

    def __len__(self) -> int:
        return len(self.row)

    def fill(self, ids: Sequence[int], vectors: Any, han: Sequence[bool]) -> None:
        """All rows at once (loading): ids[k]'s vector is vectors[k]; han[k]: is its text
        written in Chinese."""
        np = self.np
        self.matrix = np.array(vectors, dtype=np.float32)  # a copy: rows change
        self.ids = np.array(ids, dtype=np.int64)
        self.han = np.array(han, dtype=bool)
        self.scripts = None
        self.row = {int(i): k for k, i in enumerate(self.ids)}
        size = len(self.ids)
        self.codes = np.empty(self.matrix.shape, dtype=np.int8)
        self.scale = np.empty(size, dtype=np.float32)
        self.error = np.empty(size, dtype=np.float32)
        self.length = np.empty(size, dtype=np.float32)
        self.stale = set()
        for start in range(0, size, 8 * GEMV_ROWS):  # in pieces: little extra memory
            self._encode(slice(start, min(start + 8 * GEMV_ROWS, size)))

    def _refresh(self) -> None:
        """The rough copy of every row put since the last search, in one go (a row at a
        time, the many small numpy calls cost more than the row's float32 itself)."""
        if self.stale:
            rows = self.np.array(sorted(self.row[i] for i in self.stale), dtype=self.np.int64)
            for start in range(0, len(rows), 8 * GEMV_ROWS):
                self._encode(rows[start:start + 8 * GEMV_ROWS])
            self.stale.clear()

    def _encode(self, rows: Any) -> None:
        """The rough copy of `rows` (a slice or row numbers), from the float32 rows."""
        codes, scale, error = rough_copy(self.matrix[rows])
        self.codes[rows], self.scale[rows], self.error[rows] = codes, scale, error
        self.length[rows] = self.np.linalg.norm(codes * scale[..., None], axis=-1)

    def put(self, memory_id: int, vector: Any, han: bool = False) -> None:
        np = self.np
        at = self.row.get(memory_id)
        if at is None:
            at = len(self.row)
            if at == len(self.ids):  # grow by half
                grow = max(64, at // 2)
                width = self.matrix.shape[1]
                self.matrix = np.concatenate([self.matrix, np.zeros((grow, width), np.float32)])
                self.codes = np.concatenate([self.codes, np.zeros((grow, width), np.int8)])
                self.scale = np.concatenate([self.scale, np.zeros(grow, np.float32)])
                self.error = np.concatenate([self.error, np.zeros(grow, np.float32)])
                self.length = np.concatenate([self.length, np.zeros(grow, np.float32)])
                self.ids = np.concatenate([self.ids, np.zeros(grow, np.int64)])
                self.han = np.concatenate([self.han, np.zeros(grow, bool)])
            self.row[memory_id] = at
            self.ids[at] = memory_id
        self.matrix[at] = vector
        self.han[at] = han
        self.scripts = None
        self.stale.add(memory_id)

    def drop(self, memory_id: int) -> None:
        at = self.row.pop(memory_id, None)
        if at is None:
            return
        self.scripts = None
        self.stale.discard(memory_id)
        last = len(self.row)  # the old last row's index
        if at != last:
            moved = int(self.ids[last])
            for column in (self.matrix, self.codes, self.scale, self.error, self.length,
                           self.ids, self.han):
                column[at] = column[last]
            self.row[moved] = at
        for column in (self.matrix, self.codes, self.scale, self.error, self.length, self.han):
            column[last] = 0

    def top(self, query: Any, n: int,
            helpers: Any = None,  # a thread pool whose worker may scan beside this thread
            balance: bool = False,  # rank each script against its own best (see below)
            ) -> list[tuple[int, float]]:
        """The `n` nearest (memory id, cosine), best first (equal scores: the larger id,
        the memory written later, first). Exact: what scoring every float32 row would give.

        balance=True ranks each row by its cosine less the mean of the BALANCE best
        cosines among the rows written in the same script as it (Chinese, or not): a
        Chinese question's cosines to Chinese texts all run higher than to English ones,
        so without it an English answer falls behind Chinese rows that are merely Chinese.
        This is the neighbourhood term of CSLS (Conneau, Lample et al., "Word translation
        without parallel data", ICLR 2018), per script. Only when each script has at least
        BALANCE rows; the cosines returned are the plain ones."""
        np = self.np
        size = len(self.row)
        if size == 0:
            return []
        n = min(n, size)
        query = np.asarray(query, dtype=np.float32)
        self._refresh()
        if -(-size // GEMV_ROWS) < SCAN_APART:  # small: every float32 row, in this thread
            rows = np.arange(size)
            scores = self._scan(self.matrix, query, size)
            shift = self._levels(query, scores=scores) if balance else None
        else:  # big: the rough copy first (two threads), then the rows it cannot rule out
            codes, scale, error = rough_copy(query)
            rough = self._scan(self.codes, codes, size, helpers) * (self.scale[:size] * scale)
            slack = (self.error[:size] * np.float32(np.linalg.norm(query))
                     + self.length[:size] * error + np.float32(SLACK))
            shift = self._levels(query, rough=rough, slack=slack) if balance else None
            if shift is not None:
                rough = rough - shift
            rows = _contenders(rough - slack, rough + slack, n)  # every row that could be
            scores = self.matrix[rows] @ query                  # among the n best
        ranked = scores if shift is None else scores - shift[rows]
        nth = np.partition(ranked, len(ranked) - n)[len(ranked) - n]
        keep = ranked >= nth  # with all ties of the n-th
        rows, scores, ranked = rows[keep], scores[keep], ranked[keep]
        best = np.lexsort((-self.ids[rows], -ranked))[:n]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in best]

    def _levels(self, query: Any, scores: Any = None, rough: Any = None,
                slack: Any = None) -> Any:
        """Each row's script's level for `query`: the mean of the BALANCE best exact cosines
        among the rows of its script (None when a script has fewer rows). From the exact
        `scores` of every row, or from the rough ones: then only the rows whose rough score
        could be among the script's BALANCE best are scored exactly (`_contenders`)."""
        np = self.np
        size = len(self.row)
        han = self.han[:size]
        if self.scripts is None:
            self.scripts = (np.flatnonzero(~han), np.flatnonzero(han))
        if min(len(rows) for rows in self.scripts) < BALANCE:
            return None
        level = np.empty(2, dtype=np.float32)
        if rough is not None:
            lowest, highest = rough - slack, rough + slack
        for script, rows in enumerate(self.scripts):
            if scores is not None:
                found = scores[rows]
            else:
                near = rows[_contenders(lowest[rows], highest[rows], BALANCE)]
                found = self.matrix[near] @ query
            level[script] = np.partition(found, len(found) - BALANCE)[len(found) - BALANCE:].mean()
        return np.where(han, level[1], level[0])

    def cosines(self, query: Any, memory_ids: Sequence[int]) -> dict[int, float]:
        """{memory id: cosine with `query`} of those of `memory_ids` in the matrix, from the
        float32 rows (the same numbers `top` gives them)."""
        np = self.np
        ids = [i for i in dict.fromkeys(memory_ids) if i in self.row]
        if not ids:
            return {}
        rows = np.array([self.row[i] for i in ids], dtype=np.int64)
        scores = self.matrix[rows] @ np.asarray(query, dtype=np.float32)
        return {i: float(score) for i, score in zip(ids, scores, strict=True)}

    def _scan(self, matrix: Any, query: Any, size: int, helpers: Any = None) -> Any:
        """matrix[:size] @ query, GEMV_ROWS rows at a time: float32 rows by one BLAS call
        per piece (small enough that OpenBLAS stays on one thread), int8 rows and an int8
        query by simsimd. With `helpers`, a worker thread takes pieces too, so both cores
        read memory (neither call holds the GIL): each thread takes the next piece. This
        thread never waits for the worker: a piece the worker took but has not finished
        (it was not scheduled in time, the machine is busy) is scored here again, into
        another array: the worker may still be writing its own (BLAS zeroes the output,
        then adds to it: two writers of one piece would double it)."""
        import simsimd  # noqa: PLC0415

        np = self.np
        scores = np.empty(size, dtype=np.float32)
        pieces = -(-size // GEMV_ROWS)
        done = [False] * pieces
        taken = itertools.count()  # the next piece to score; next() on it is atomic
        rough = matrix.dtype == np.int8
        pair = query[None, :] if rough else None

        def score(piece: int, out: Any) -> None:
            start, stop = piece * GEMV_ROWS, min((piece + 1) * GEMV_ROWS, size)
            if rough:  # exact integers: 256 × 127 × 127 is far below float32's 2**24
                # (not out=: simsimd 6.5 then returns None without owning a reference to it)
                found = simsimd.cdist(matrix[start:stop], pair, metric="dot", out_dtype="float32")
                out[start:stop] = np.asarray(found)[:, 0]
            else:
                np.dot(matrix[start:stop], query, out=out[start:stop])

        def scan() -> None:
            for piece in taken:
                if piece >= pieces:
                    return
                score(piece, scores)
                done[piece] = True  # after the piece is written

        helper = helpers.submit(scan) if helpers is not None else None
        scan()
        if helper is None:
            return scores
        helper.cancel()  # not started yet: it never will
        unfinished = [piece for piece in range(pieces) if not done[piece]]  # the worker's
        mine = scores.copy()
        for piece in unfinished:
            score(piece, mine)
        return mine


def _contenders(lowest: Any, highest: Any, n: int) -> Any:
    """The rows whose highest possible score reaches the n-th best of the lowest ones:
    every row that could be among the n best. The same rows a partial sort of all the
    lowest scores would give, found from a sample first (SAMPLE rows, evenly spread: its
    n-th best is never above the whole's), then from the rows that could beat that."""
    import numpy as np  # noqa: PLC0415

    size = len(lowest)
    sample = lowest[::max(1, size // SAMPLE)]
    if len(sample) < n:
        sample = lowest
    bound = np.partition(sample, len(sample) - n)[len(sample) - n]
    rows = np.flatnonzero(highest >= bound)
    near = lowest[rows]
    bound = np.partition(near, len(near) - n)[len(near) - n]  # the n-th best of all
    return rows[highest[rows] >= bound]


def rough_copy(vectors: Any) -> tuple[Any, Any, Any]:
    """(int8 codes, scale, |vector - codes × scale|) of one vector, or of each row of a
    matrix: its largest component becomes ±127 (a vector of zeros: codes 0, error 0)."""
    import numpy as np  # noqa: PLC0415

    scale = np.abs(vectors).max(axis=-1, keepdims=True) / np.float32(127)
    scale[scale == 0] = 1
    codes = np.rint(vectors / scale).astype(np.int8)
    error = np.linalg.norm(vectors - codes * scale, axis=-1).astype(np.float32)
    return codes, scale[..., 0], error


# ----------------------------------------------------------------- the memory

class LongTermMemory:
    """One user's long-term memories, in the session store's database."""

    def __init__(self, store: SessionStore | str,   # a SessionStore, or its URL
                 user_id: str,
                 *, embedder: Callable[[Sequence[str]], Any] | None = None):
        # embedder: texts -> unit vectors, with a .name; None: Embedder(), the backend switch
        from lesson_lib.embeddings import Embedder  # noqa: PLC0415

        _check_text("user_id", user_id)
        self.store = SessionStore(store) if isinstance(store, str) else store
        self.user_id = user_id
        self.embedder = embedder if embedder is not None else Embedder()
        self.model = getattr(self.embedder, "name", None) or repr(self.embedder)
        _create(self.store)
        self._matrix: _Matrix | None = None
        self._other_models: set[int] = set()
        self._counted: tuple[int, int] = (-1, 0)  # (change seq, the user's memories) then

    # ------------------------------------------------------------- writing

    def write(self, text: str, *, source: str,       # see SOURCES
              ref: str | None = None,                # the session, document or tool
              subject: str | None = None,            # a newer memory of it replaces this
              at: str | datetime | None = None,      # when it was said; None: now
              ) -> Memory | None:
        """Store one memory; returns it (None: a newer one of its subject is kept instead)."""
        return self.write_many([text], source=source, ref=ref, subject=subject, at=at)[0]

    def write_many(self, texts: Sequence[str], *, source: str, ref: str | None = None,
                   subject: str | None = None, at: str | datetime | None = None,
                   ) -> list[Memory | None]:
        """Store several memories of one source at once (one embedding request, one
        transaction). With a subject, the last text is the one kept."""
        texts = [_check_memory_text(text) for text in texts]
        if source not in SOURCES:
            raise ValueError(_("source must be one of {sources} (who said it), got "
                               "{value}").format(sources=", ".join(SOURCES), value=repr(source)))
        if subject is not None:
            _check_text("subject", subject)
        check_storable("ref", ref)
        stamp = _when(at)
        skipped: list[Memory | None] = []
        if subject is not None and len(texts) > 1:  # each would replace the one before
            skipped, texts = [None] * (len(texts) - 1), texts[-1:]
        vectors = self._vectors(texts)
        sa, t = _sa(), tables()
        m = t.memories
        with self.store._writing() as conn:
            if source == "user":  # user facts: a fact about the same thing replaces it
                return [*skipped, *self._settle(conn, texts, vectors, ref, subject, stamp)]
            if subject is not None:
                older = conn.execute(sa.select(m.c.id, m.c.created_at).where(
                    m.c.user_id == self.user_id, m.c.subject == subject)).all()
                if any(when > stamp for _id, when in older):
                    return [*skipped, None]  # the stored one is newer: this one is stale
                for old_id, _created in older:
                    self._delete_row(conn, old_id)
            updated = _now()
            rows = [{"user_id": self.user_id, "source": source, "ref": ref, "subject": subject,
                     "text": text, "terms": " ".join(terms(text)), "created_at": stamp,
                     "updated_at": updated, "model": self.model, "vector": _pack(vector)}
                    for text, vector in zip(texts, vectors, strict=True)]
            ids = self._insert(conn, rows)
        return [*skipped, *(Memory(i, row["text"], source, ref, subject, stamp, updated)
                            for i, row in zip(ids, rows, strict=True))]

    def _insert(self, conn: Any, rows: list[dict]) -> list[int]:
        """Insert memory rows with their index entries and change log; their ids."""
        t = tables()
        m = t.memories
        ids = conn.execute(m.insert().returning(m.c.id, sort_by_parameter_order=True),
                           rows).scalars().all()
        if self.store.dialect == "sqlite":  # PostgreSQL indexes the terms column itself
            conn.exec_driver_sql("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)",
                                 [(i, row["terms"]) for i, row in zip(ids, rows, strict=True)])
        conn.execute(t.changes.insert(), [{"user_id": self.user_id, "memory_id": i}
                                          for i in ids])
        return ids

    def _similar(self) -> Callable[[str, str], float]:
        """similar(a, b): the cosine of two texts' vectors, each text embedded once."""
        cache: dict[str, Any] = {}

        def similar(a: str, b: str) -> float:
            missing = [x for x in dict.fromkeys((a, b)) if x not in cache]
            if missing:
                cache.update(zip(missing, self._vectors(missing), strict=True))
            return float(cache[a] @ cache[b])
        return similar

    def _settle(self, conn: Any, texts: Sequence[str], vectors: Any, ref: str | None,
                subject: str | None, stamp: str) -> list[Memory | None]:
        """Write user facts by update_rule: each replaces the stored user facts about the
        same thing (same_thing): the oldest of them is rewritten in place with the newest
        text and date, the others are deleted; a fact older than a stored one about the
        same thing is stale (None), and the stored one stays. Candidates are the facts
        within NEAR of the new one's vector (and, when it names a subject, those that
        name one), so a write compares a handful of facts, not all."""
        import numpy as np  # noqa: PLC0415

        sa, m = _sa(), tables().memories
        stored = [{"id": i, "text": text, "subject": subj, "at": at, "ref": r,
                   "vector": np.frombuffer(v, dtype="<f4") if model == self.model else None}
                  for i, text, subj, at, r, model, v in conn.execute(
                      sa.select(m.c.id, m.c.text, m.c.subject, m.c.created_at, m.c.ref,
                                m.c.model, m.c.vector).where(
                          m.c.user_id == self.user_id, m.c.source == "user")
                      .order_by(m.c.id)).all()]
        similar, done = self._similar(), []
        for text, vector in zip(texts, vectors, strict=True):
            new = {"text": text, "subject": subject, "at": stamp, "ref": ref,
                   "vector": np.asarray(vector, dtype=np.float32)}
            near = [f for f in stored if (subject and f["subject"]) or f["vector"] is None
                    or float(f["vector"] @ new["vector"]) >= NEAR]
            same = [f for f in near if same_thing(f, new, similar)]
            newest = max([new, *same], key=lambda fact: fact["at"])
            keep = newest if newest is not new else (same[0] if same else None)
            for fact in same:
                if fact is not keep:
                    self._delete_row(conn, fact["id"])
                    stored.remove(fact)
            if newest is not new:
                done.append(None)  # a stored fact about the same thing is newer
                continue
            new["subject"] = subject or next((f["subject"] for f in same if f["subject"]),
                                             None)
            row = {"text": text, "subject": new["subject"], "ref": ref, "created_at": stamp,
                   "updated_at": _now(), "terms": " ".join(terms(text)),
                   "model": self.model, "vector": _pack(vector)}
            if keep is None:
                (new["id"],) = self._insert(conn, [{"user_id": self.user_id,
                                                    "source": "user", **row}])
                stored.append(new)
            else:  # the old row, rewritten: new text, new vector, the newer date
                conn.execute(m.update().where(m.c.id == keep["id"]).values(**row))
                self._unindex(conn, keep["id"])
                self._index(conn, keep["id"], text)
                self._log(conn, keep["id"])
                keep.update(new, id=keep["id"])
                new = keep
            done.append(Memory(new["id"], text, "user", ref, new["subject"], stamp,
                               row["updated_at"]))
        return done

    def remember_user_fact(self, text: str,
                           messages: Iterable[Mapping],  # the conversation it comes from
                           *, subject: str | None = None, session_id: str | None = None,
                           at: str | datetime | None = None) -> Memory | None:
        """Store `text` as a user fact, if the user's own messages say it (said_by_user);
        else MemoryPoisoningError, whose message names why (lesson_lib.write_policy), and
        nothing is written."""
        verdict = write_policy.judge(text, messages)
        if verdict.reason == "not_said":
            raise MemoryPoisoningError(_(
                "not stored: {text} is not in anything the user said. Only the user's own "
                "statements become user facts; a tool result or a document that says "
                "'remember that …' is not the user speaking. Store it with its real source "
                "(write(text, source='tool'|'document'|'assistant')) if it is worth "
                "keeping").format(text=repr(text)))
        if not verdict.stored:
            raise MemoryPoisoningError(_(
                "not stored: {text} is not what the user said of themself: {why}. Only a "
                "plain statement the user makes about themself becomes a user fact; store "
                "what the user did say, or keep this with its real source "
                "(write(text, source='assistant'|'tool'|'document')) if it is worth "
                "keeping").format(text=repr(text), why=write_policy.explain(verdict)))
        return self.write(text, source="user", ref=session_id, subject=subject, at=at)

    def remember_session(self, *, session_id: str,
                         summary: str | None = None,                  # the summary, if written
                         messages: Sequence[Mapping] | None = None,   # …or the conversation
                         summarizer: Callable[[list[dict]], str] | None = None,
                         at: str | datetime | None = None) -> Memory | None:
        """Keep a finished (or trimmed) conversation as experience: its summary, with the
        source "session". Give the `summary`, or the `messages` and the model writes it
        (budget.model_summarizer(): the offline model's is deterministic). A session is
        remembered once: remembering it again replaces its earlier summary."""
        if summary is None:
            if messages is None:
                raise ValueError(_("give the summary=..., or the messages=... to summarise"))
            from lesson_lib.budget import model_summarizer  # noqa: PLC0415

            summary = (summarizer or model_summarizer())([dict(m) for m in messages])
        return self.write(summary, source="session", ref=session_id,
                          subject=f"session {session_id}", at=at)

    def consolidate(self) -> list[Memory]:
        """Merge the session summaries (source "session") that are about the same thing
        (same_thing on their texts) into one each: the newest summary's text and date,
        with the refs of every session it was made from, one per line, so that forgetting
        any of those sessions (forgetting.filed_under) still deletes what came of it.
        Returns the merged memories (one per group of two or more)."""
        sa, m = _sa(), tables().memories
        similar = self._similar()
        with self.store._writing() as conn:
            rows = conn.execute(sa.select(m.c.id, m.c.text, m.c.ref, m.c.created_at).where(
                m.c.user_id == self.user_id, m.c.source == "session")
                .order_by(m.c.created_at, m.c.id)).all()
            groups: list[list[Any]] = []
            for row in rows:  # oldest first: each joins the first group it is the same as
                fact = {"text": row.text, "subject": None}
                group = next((g for g in groups if same_thing(
                    {"text": g[-1].text, "subject": None}, fact, similar)), None)
                if group is None:
                    groups.append([row])
                else:
                    group.append(row)
            merged = []
            for group in (g for g in groups if len(g) > 1):
                newest, keep = group[-1], group[0]
                refs = list(dict.fromkeys(
                    r for row in group for r in (row.ref or "").split("\n") if r))
                for row in group[1:]:
                    self._delete_row(conn, row.id)
                vector = self._vectors([newest.text])[0]
                conn.execute(m.update().where(m.c.id == keep.id).values(
                    text=newest.text, terms=" ".join(terms(newest.text)), ref="\n".join(refs),
                    subject=f"session {newest.ref.split(chr(10))[-1]}" if newest.ref else None,
                    created_at=newest.created_at, updated_at=_now(), model=self.model,
                    vector=_pack(vector)))
                self._unindex(conn, keep.id)
                self._index(conn, keep.id, newest.text)
                self._log(conn, keep.id)
                merged.append(self._get(conn, keep.id))
        if merged:
            self._purge()
        return merged

    def update(self, memory_id: int, text: str, *,
               at: str | datetime | None = None) -> Memory:   # when it was said; None: now
        """Rewrite a memory: new text, new vector, new index entries; the old text is gone,
        and the memory takes the new text's date (a fact restated today is today's: it
        ranks and reads as the newer one)."""
        text = _check_memory_text(text)
        stamp = _when(at)
        vector = self._vectors([text])[0]
        m = tables().memories
        with self.store._writing() as conn:
            self._own(conn, memory_id)
            conn.execute(m.update().where(m.c.id == memory_id).values(
                text=text, terms=" ".join(terms(text)), created_at=stamp, updated_at=_now(),
                model=self.model, vector=_pack(vector)))
            self._unindex(conn, memory_id)
            self._index(conn, memory_id, text)
            self._log(conn, memory_id)
            memory = self._get(conn, memory_id)
        self._purge()
        return memory

    # ------------------------------------------------------------- deleting

    def delete(self, memory_id: int) -> bool:
        """Delete one memory for good; False if the user has no memory with that id."""
        with self.store._writing() as conn:
            if self._get(conn, memory_id) is None:
                return False
            self._delete_row(conn, memory_id)
        self._purge()
        return True

    def forget(self, about: str) -> list[Memory]:
        """Delete every memory whose terms include all of `about`'s (or whose subject is
        `about`); returns what was deleted. Words decide, not similarity: nothing is
        deleted because it merely resembles `about`."""
        check_storable("about", about)
        wanted = set(terms(about))
        if not wanted:
            raise ValueError(_("forget(about=...) needs a word to look for, got {value}").format(
                value=repr(about)))
        sa, m = _sa(), tables().memories
        gone = []
        with self.store._writing() as conn:
            candidates = {i for i, _score in self._lexical(conn, sorted(wanted), 10**9, every=True)}
            candidates |= set(conn.execute(sa.select(m.c.id).where(
                m.c.user_id == self.user_id, m.c.subject == about)).scalars())
            ordered, rows = sorted(candidates), []
            for at in range(0, len(ordered), 500):
                rows += conn.execute(sa.select(m.c.id, m.c.terms, m.c.subject).where(
                    m.c.id.in_(ordered[at:at + 500]))).all()
            for memory_id, its_terms, subject in rows:  # the index found them; check again
                if wanted <= set(its_terms.split()) or subject == about:
                    gone.append(self._get(conn, memory_id))
                    self._delete_row(conn, memory_id)
        if gone:
            self._purge()
        return gone

    def clear(self) -> int:
        """Delete all of the user's memories; returns how many."""
        sa, m = _sa(), tables().memories
        with self.store._writing() as conn:
            ids = conn.execute(sa.select(m.c.id).where(m.c.user_id == self.user_id)).scalars().all()
            for memory_id in ids:
                self._delete_row(conn, memory_id)
        if ids:
            self._purge()
        return len(ids)

    def mentions(self, text: str) -> int:
        """How many places still hold `text` (0: it is gone): the user's memories whose text
        contains it, those the lexical index finds with all of its terms, and, on SQLite,
        index entries left without a memory (there should never be any)."""
        check_storable("text", text)
        sa, m = _sa(), tables().memories
        wanted = sorted(set(terms(text)))
        with self.store._reading() as conn:
            rows = conn.execute(sa.select(m.c.text).where(m.c.user_id == self.user_id)).scalars()
            found = sum(text.lower() in row.lower() for row in rows)
            if wanted:
                found += len(self._lexical(conn, wanted, 10**9, every=True))
                if self.store.dialect == "sqlite":
                    found += conn.exec_driver_sql(
                        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ? AND "
                        "rowid NOT IN (SELECT id FROM memories)",
                        (" AND ".join(f'"{w}"' for w in wanted),)).scalar()
        return found

    # ------------------------------------------------------------- reading

    def get(self, memory_id: int) -> Memory | None:
        with self.store._reading() as conn:
            return self._get(conn, memory_id)

    def all(self) -> list[Memory]:
        """Every memory of the user, oldest first."""
        sa, m = _sa(), tables().memories
        with self.store._reading() as conn:
            ids = conn.execute(sa.select(m.c.id).where(m.c.user_id == self.user_id)
                               .order_by(m.c.created_at, m.c.id)).scalars().all()
            found: dict[int, Memory] = {}
            for start in range(0, len(ids), 500):  # a few hundred ids per query, not one each
                found.update(self._get_many(conn, ids[start:start + 500]))
            return [found[i] for i in ids if i in found]

    def user_facts(self) -> list[Memory]:
        """The user's own statements (source "user"), oldest first."""
        return [memory for memory in self.all() if memory.is_user_fact]

    def __len__(self) -> int:
        sa, m = _sa(), tables().memories
        with self.store._reading() as conn:
            return conn.execute(sa.select(sa.func.count()).where(
                m.c.user_id == self.user_id)).scalar()

    def search(self, query: str, k: int = 5, *,
               method: str = DEFAULT_METHOD,   # "fused", "dense" or "lexical"
               sources: Iterable[str] | None = None,  # only these sources (None: all)
               min_score: float | None = MIN_SCORE,  # the least cosine a hit needs (None: no
               ) -> list[Hit]:                         # floor: always k hits when there are)
        """The `k` memories that best answer `query`, best first; none when nothing does.

        `min_score` is the floor that lets a search say "nothing": a memory whose cosine
        similarity to the question (`Hit.dense`, computed for every candidate, also for
        those found by words alone) is below it is not a hit, whatever its rank; a search
        whose candidates are all below it returns []. method="lexical" has no floor (no
        vector is computed: it is the way out when the vectors are another model's), but
        it finds only memories with a word of the question. The default is no floor
        (MIN_SCORE = None): the k best, whatever their scores. ABSTAIN_FLOOR = 0.18 was
        chosen on development cases (benchmarks/abstain.py) for the offline embedder (the
        multilingual Universal Sentence Encoder) and refuses only some of the questions
        nothing answers (the module docstring gives the figures); another embedder's
        cosines have another scale and need their own floor."""
        if method not in METHODS:
            raise ValueError(_("method must be one of {methods}, got {value}").format(
                methods=", ".join(METHODS), value=repr(method)))
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(_("k is how many memories to return, at least 1, got "
                               "{value}").format(value=repr(k)))
        check_storable("query", query)
        if min_score is not None and (isinstance(min_score, bool)
                                      or not isinstance(min_score, (int, float))
                                      or not -1.0 <= min_score <= 1.0):
            raise ValueError(_("min_score is a cosine similarity between -1 and 1 (or None: "
                               "no floor), got {value}").format(value=repr(min_score)))
        wanted = set(sources) if sources is not None else None
        n = max(CANDIDATES, 4 * k) if method == "fused" or wanted else k
        dense: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []
        words = sorted(set(terms(query)))
        vector = None
        apart = method == "fused" and not self._one_connection()
        beside = _pool().submit(self._lexical_apart, words, n) if apart else None
        with self.store._reading() as conn:  # fused: the words are looked up in another
            cosine: dict[int, float] = {}     # thread meanwhile (SQLite and NumPy both let
            if method != "lexical":           # go of the GIL while they work)
                matrix = self._synced(conn)
                vector = self._vectors([query])[0] if len(matrix) else None
                if method in ("fused", "dense") and vector is not None:
                    dense = matrix.top(vector, n, _pool(), balance=method == "fused")
            if method == "lexical" or (method == "fused" and not apart):
                lexical = self._lexical(conn, words, n)
            if beside is not None:
                lexical = beside.result()
            if method != "dense" and vector is not None:
                # the cosine of every memory found by words, too, from the matrix: the
                # floor and Hit.dense read it (fusion still ranks by the two lists alone)
                cosine = matrix.cosines(vector, [i for i, _score in lexical])
            dense_of = {**cosine, **dict(dense)}
            if method == "dense":
                ranked = dense
            elif method == "lexical":
                ranked = lexical
            else:
                ranked = _fuse(dense, lexical)  # see the module docstring: the cliff
            if min_score is not None and method != "lexical":  # "nothing": below the floor
                ranked = [item for item in ranked
                          if dense_of.get(item[0], -1.0) >= min_score]
            lexical_of = dict(lexical)
            found = self._found(conn, ranked[:n], k, wanted)
            # equal scores: the newer memory first (by its date; then the one written later)
            ranked = sorted((item for item in ranked[:n] if item[0] in found),
                            key=lambda item: -item[0])
            ranked.sort(key=lambda item: found[item[0]].created_at, reverse=True)
            ranked.sort(key=lambda item: -item[1])  # stable: ties keep the order above
            hits = []
            for memory_id, score in ranked:
                memory = found.get(memory_id)
                if memory is None or (wanted is not None and memory.source not in wanted):
                    continue
                hits.append(Hit(memory, score, dense_of.get(memory_id),
                                lexical_of.get(memory_id)))
                if len(hits) == k:
                    break
        return hits

    def _found(self, conn: Any, ranked: list[tuple[int, float]], k: int,
               wanted: set[str] | None) -> dict[int, Memory]:
        """The memories the k hits are taken from, read from the database: the best of
        `ranked` by score, k of them and every one tied with the last (a tie is broken by the
        memory's date, so all of them are read), then more only if some of those are gone
        or of another source. Reading every candidate (50 for a fused search) took
        milliseconds at 100,000 memories: each is a row of the big table, its vector beside
        it. Returns {id: memory} of those read that are this user's (equal scores are read
        together, so the hits are the ones reading every candidate would give)."""
        order = sorted(ranked, key=lambda item: -item[1])
        found: dict[int, Memory] = {}
        read, usable, want = 0, 0, k
        while read < len(order) and usable < k:
            cut = min(want, len(order))
            while cut < len(order) and order[cut][1] == order[cut - 1][1]:
                cut += 1  # every memory tied with the last one read
            more = self._get_many(conn, [i for i, _score in order[read:cut]])
            found.update(more)
            usable += sum(1 for memory in more.values()
                          if wanted is None or memory.source in wanted)
            read, want = cut, cut + (k - usable)
        return found

    def _one_connection(self) -> bool:
        """An in-memory SQLite database ("sqlite://") lives in one connection, which another
        thread cannot see: its words are looked up in the search's own thread."""
        url = self.store._url
        return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")

    def as_prompt(self, hits: Iterable[Hit | Memory]) -> str:
        """Hits as a block for the system prompt: newest first, each with its date and
        source, user facts marked as the user's own words ("" when there are none)."""
        memories = [h.memory if isinstance(h, Hit) else h for h in hits]
        if not memories:
            return ""
        lines = [_(PROMPT_HEAD)]
        for memory in sorted(memories, key=lambda x: (x.created_at, x.id), reverse=True):
            who = _("the user said") if memory.is_user_fact else _(SOURCES[memory.source])
            lines.append(f"- {memory.created_at[:10]} ({who}): {memory.text}")
        return "\n".join(lines)

    def reindex(self) -> int:
        """Embed again, with this memory's embedder, every memory another embedder made
        (after switching backend: vectors of two models cannot be compared)."""
        sa, m = _sa(), tables().memories
        with self.store._reading() as conn:
            rows = conn.execute(sa.select(m.c.id, m.c.text).where(
                m.c.user_id == self.user_id, m.c.model != self.model)).all()
        if not rows:
            return 0
        vectors = self._vectors([text for _id, text in rows])
        with self.store._writing() as conn:
            for (memory_id, _text), vector in zip(rows, vectors, strict=True):
                conn.execute(m.update().where(m.c.id == memory_id).values(
                    model=self.model, vector=_pack(vector)))
                self._log(conn, memory_id)
        return len(rows)

    def __repr__(self) -> str:
        return _("LongTermMemory({where}, user {user})").format(where=repr(self.store.where),
                                                                user=repr(self.user_id))

    # ------------------------------------------------------------- inside

    def _vectors(self, texts: Sequence[str]) -> Any:
        return self.embedder(list(texts))

    def _get(self, conn: Any, memory_id: int) -> Memory | None:
        if isinstance(memory_id, bool) or not isinstance(memory_id, int):
            return None
        return self._get_many(conn, [memory_id]).get(memory_id)

    def _get_many(self, conn: Any, memory_ids: list[int]) -> dict[int, Memory]:
        sa, m = _sa(), tables().memories
        if not memory_ids:
            return {}
        rows = conn.execute(sa.select(m.c.user_id, m.c.id, m.c.text, m.c.source, m.c.ref,
                                      m.c.subject, m.c.created_at, m.c.updated_at)
                            .where(m.c.id.in_(memory_ids))).all()  # by the primary key:
        # with the user in the WHERE, SQLite's planner may scan the user's index instead
        return {row[1]: Memory(*row[1:]) for row in rows if row[0] == self.user_id}

    def _owners(self, conn: Any, memory_ids: list[int]) -> dict[int, str]:
        sa, m = _sa(), tables().memories
        if not memory_ids:
            return {}
        return dict(conn.execute(sa.select(m.c.id, m.c.user_id)
                                 .where(m.c.id.in_(memory_ids))).all())

    def _own(self, conn: Any, memory_id: int) -> None:
        if self._get(conn, memory_id) is None:
            raise StoreError(_("user {user} has no memory {id} in {where}: it was deleted, "
                               "or never written").format(user=repr(self.user_id),
                                                          id=repr(memory_id),
                                                          where=self.store.where))

    def _log(self, conn: Any, memory_id: int) -> None:
        conn.execute(tables().changes.insert().values(user_id=self.user_id,
                                                      memory_id=memory_id))

    def _delete_row(self, conn: Any, memory_id: int) -> None:
        m = tables().memories
        self._unindex(conn, memory_id)
        conn.execute(m.delete().where(m.c.id == memory_id))
        self._log(conn, memory_id)

    def _purge(self, wait: float | None = None) -> bool:
        """SQLite: make deleted index entries really gone. FTS5 deletes by writing a delete
        marker; the old terms stay in the index's pages until its segments are merged. With
        SQLite 3.44+ the index's secure-delete option removes them at once; before it, an
        'optimize' rewrites the index into one segment without them (slower on big indexes:
        benchmarks/longterm.py measures it). Then the WAL is emptied into the file."""
        if self.store.dialect != "sqlite":
            return True  # PostgreSQL: deleted rows wait for VACUUM, as the session store says
        if not _secure_delete(self.store):
            with self.store._writing() as conn:
                conn.exec_driver_sql("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
        return self.store._checkpoint(wait)  # False: a reader held the WAL (store._checkpoint)

    def _index(self, conn: Any, memory_id: int, text: str) -> None:
        if self.store.dialect == "sqlite":  # PostgreSQL indexes the terms column itself
            conn.exec_driver_sql("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)",
                                 (memory_id, " ".join(terms(text))))

    def _unindex(self, conn: Any, memory_id: int) -> None:
        if self.store.dialect == "sqlite":
            conn.exec_driver_sql("DELETE FROM memories_fts WHERE rowid = ?", (memory_id,))

    def _lexical(self, conn: Any, wanted: list[str], n: int,
                 every: bool = False) -> list[tuple[int, float]]:
        """(memory id, score) of the user's memories with any (every=True: all) of the
        terms, best first. The database's full-text index finds them (FTS5 on SQLite, a GIN
        index on PostgreSQL); they are scored here, by BM25 over this user's memories alone
        (`_bm25`): another user's memories never change how a term weighs for this one, and
        both databases give the same scores."""
        if not wanted:
            return []
        sa, m = _sa(), tables().memories
        if self.store.dialect == "sqlite":
            if not every:
                wanted = self._rare(conn, wanted)
            query = (" AND " if every else " OR ").join(f'"{w}"' for w in wanted)
            joined = ("SELECT m.id, m.terms FROM memories_fts CROSS JOIN memories m ON m.id = "
                      "memories_fts.rowid WHERE memories_fts MATCH ? AND m.user_id = ?")
            rows = conn.exec_driver_sql(joined + " LIMIT ?",  # this user's matches, each
                                        (query, self.user_id, LEXICAL_BUDGET)).all()  # with its
            if len(rows) == LEXICAL_BUDGET:  # terms; more than that: the index's best of them
                rows = conn.exec_driver_sql(joined + " ORDER BY bm25(memories_fts) LIMIT ?",
                                            (query, self.user_id, LEXICAL_BUDGET)).all()
        else:
            query = (" & " if every else " | ").join(f"'{w}'" for w in wanted)
            tsquery = sa.cast(query, sa.dialects.postgresql.TSQUERY)
            vector = _tsvector(m.c.terms)
            rows = conn.execute(sa.select(m.c.id, m.c.terms).where(
                m.c.user_id == self.user_id, vector.op("@@")(tsquery))
                .order_by(sa.func.ts_rank(vector, tsquery).desc(), m.c.id)
                .limit(LEXICAL_BUDGET)).all()
        if every:
            return [(int(i), 1.0) for i, _terms in rows]
        return _bm25(wanted, [(int(i), t) for i, t in rows], self._count(conn), n)

    def _count(self, conn: Any) -> int:
        """How many memories the user has: counted again only when the change log moved
        (counting 100,000 rows takes milliseconds; reading the log's last entry does not)."""
        sa, t = _sa(), tables()
        seq = conn.execute(sa.select(sa.func.coalesce(sa.func.max(t.changes.c.seq), 0))
                           .where(t.changes.c.user_id == self.user_id)).scalar()
        counted_at, total = self._counted
        if seq != counted_at:
            total = conn.execute(sa.select(sa.func.count()).select_from(t.memories).where(
                t.memories.c.user_id == self.user_id)).scalar() or 0
            self._counted = (seq, total)
        return total

    def _lexical_apart(self, wanted: list[str], n: int) -> list[tuple[int, float]]:
        with self.store._reading() as conn:
            return self._lexical(conn, wanted, n)

    def _rare(self, conn: Any, wanted: list[str]) -> list[str]:
        """SQLite: the question's terms, rarest first, as long as the memories holding them
        add up to at most LEXICAL_BUDGET (the rarest is always kept). A search ranks every
        memory that holds one of its terms; the common ones ("Xiaoming" in half of them)
        cost the most and, by BM25's own weights, count the least."""
        conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_vocab USING "
                             "fts5vocab(main, memories_fts, row)")
        df = {w: conn.exec_driver_sql("SELECT doc FROM temp.memories_vocab WHERE term = ?",
                                      (w,)).scalar() or 0 for w in wanted}  # = is an index
        # look-up; IN (…) makes fts5vocab count every term of the index
        kept, spent = [], 0
        for term in sorted(wanted, key=lambda w: (df.get(w, 0), w)):
            spent += df.get(term, 0)
            if kept and spent > LEXICAL_BUDGET:
                break
            kept.append(term)
        return kept

    def _synced(self, conn: Any) -> _Matrix:
        """The user's vectors, with every change since the last search applied."""
        sa, t = _sa(), tables()
        m, c = t.memories, t.changes
        if self._matrix is None:
            self._matrix = self._load(conn)
            return self._matrix
        changed = conn.execute(sa.select(c.c.seq, c.c.memory_id).where(
            c.c.user_id == self.user_id, c.c.seq > self._matrix.seq).order_by(c.c.seq)).all()
        if changed:
            ids = sorted({memory_id for _seq, memory_id in changed})
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                rows = {i: (model, vector, text) for i, model, vector, text in conn.execute(
                    sa.select(m.c.id, m.c.model, m.c.vector, m.c.text)
                    .where(m.c.id.in_(chunk))).all()}
                for memory_id in chunk:
                    self._matrix.drop(memory_id)
                    self._other_models.discard(memory_id)
                    if memory_id in rows:
                        model, vector, text = rows[memory_id]
                        self._place(memory_id, model, vector, text)
            self._matrix.seq = changed[-1][0]
        self._check_models()
        return self._matrix

    def _load(self, conn: Any) -> _Matrix:
        import numpy as np  # noqa: PLC0415

        sa, t = _sa(), tables()
        m, c = t.memories, t.changes
        seq = conn.execute(sa.select(sa.func.coalesce(sa.func.max(c.c.seq), 0))
                           .where(c.c.user_id == self.user_id)).scalar()
        rows = conn.execute(sa.select(m.c.id, m.c.model, m.c.vector, m.c.text)
                            .where(m.c.user_id == self.user_id).order_by(m.c.id)).all()
        ours = [(i, v, text) for i, model, v, text in rows if model == self.model]
        self._other_models = {i for i, model, _vector, _text in rows if model != self.model}
        dimensions = len(ours[0][1]) // 4 if ours else len(_pack(self._vectors(["x"])[0])) // 4
        matrix = _Matrix(dimensions)
        if ours:
            matrix.fill([i for i, _vector, _text in ours], np.frombuffer(
                b"".join(v for _id, v, _text in ours), dtype="<f4").reshape(len(ours), dimensions),
                [chinese(text) for _id, _vector, text in ours])
        matrix.seq = seq
        self._matrix = matrix
        self._check_models()
        return matrix

    def _place(self, memory_id: int, model: str, vector: bytes, text: str) -> None:
        import numpy as np  # noqa: PLC0415

        if model != self.model:
            self._other_models.add(memory_id)
            return
        self._matrix.put(memory_id, np.frombuffer(vector, dtype="<f4"), chinese(text))

    def _check_models(self) -> None:
        if self._other_models:
            raise StoreError(_(
                "{n} of user {user}'s memories were embedded by another model than {model} "
                "(the backend, or the offline model's embedder, changed?): vectors of two models "
                "cannot be compared. Call "
                "memory.reindex() to embed them again, or search with method='lexical'").format(
                    n=len(self._other_models), user=repr(self.user_id), model=repr(self.model)))


# ----------------------------------------------------------------- helpers

_POOL: Any = None


def _pool() -> Any:
    """Two worker threads, made on first use: one looks up the words of a fused search,
    one helps scan the vectors (their work lets go of the GIL: SQLite, BLAS)."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="longterm")
    return _POOL


def _fuse(*lists: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: each list gives 1 / (RRF_K + rank) to each of its ids. Ids
    with equal scores in a list share one rank, the mean of their positions (fractional
    ranking), so a tie stays a tie and thirty memories tied for first by one rare word
    count as thirty, not as thirty firsts."""
    scores: dict[int, float] = {}
    for ranked in lists:
        position = 0
        for _score, tied in itertools.groupby(ranked, key=lambda item: item[1]):
            ids = [memory_id for memory_id, _s in tied]
            rank = position + (len(ids) + 1) / 2  # positions position+1 … position+len
            position += len(ids)
            for memory_id in ids:
                scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], -item[0]))


BM25_K1, BM25_B = 1.2, 0.75  # BM25's usual constants (FTS5's defaults too)


def _bm25(wanted: Sequence[str], rows: Sequence[tuple[int, str]],
          total: int, n: int | None = None) -> list[tuple[int, float]]:
    """BM25 of `rows` (memory id, its terms as stored) for the terms `wanted`, best first
    (equal scores: the newer memory first; with `n`, only the n best), with one user's
    statistics: `total` memories, a term's document frequency counted among the rows that
    hold any wanted term (all of them, up to LEXICAL_BUDGET), and the rows' mean length as
    the typical length. FTS5's own bm25() counts every user's memories, so one user's 300
    notes about peanuts would make "peanuts" weigh nothing for everyone else."""
    import math  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    if not rows:
        return []
    # the rows' terms as one string, each term between two spaces of its own and each row
    # on its own line: a term is found by one regular-expression scan of that string (in C)
    # and counted per row from where it was found, rather than by splitting or scanning
    # every memory apart (a search may rank LEXICAL_BUDGET of them: that was most of its time)
    texts = [text or "" for _id, text in rows]
    count = len(texts)
    spaces = np.fromiter(map(str.count, texts, itertools.repeat(" ")), np.int64, count)
    sizes = np.fromiter(map(len, texts), np.int64, count)
    lengths = np.where(sizes > 0, spaces + 1, 0)  # terms per row
    marked = " " + "\n".join(texts).replace(" ", "  ").replace("\n", " \n ") + " "
    starts = np.zeros(count, dtype=np.int64)  # where each row's line starts in `marked`
    np.cumsum(sizes[:-1] + spaces[:-1] + 3, out=starts[1:])
    wanted = sorted(set(wanted))
    tfs = []
    for w in wanted:
        found = np.fromiter((m.start() for m in re.finditer(re.escape(f" {w} "), marked)),
                            np.int64)
        tfs.append(np.bincount(np.searchsorted(starts, found, side="right") - 1,
                               minlength=count))
    total = max(total, count)
    mean = int(lengths.sum()) / count or 1.0
    norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / mean)
    score = np.zeros(count)
    for tf in tfs:  # term by term, in the same order and operations as the formula
        d = int(np.count_nonzero(tf))
        idf = math.log(1 + (total - d + 0.5) / (d + 0.5))
        score += idf * tf * (BM25_K1 + 1) / (tf + norm)
    kept = np.flatnonzero(score > 0)
    if n is not None and len(kept) > n:  # only rows that may round to the n-th best or above
        nth = np.partition(score[kept], len(kept) - n)[len(kept) - n]
        kept = kept[score[kept] >= nth - 1e-9]
    scored = [(rows[i][0], round(s, 9)) for i, s in zip(kept.tolist(), score[kept].tolist(),
                                                         strict=True)]
    return sorted(scored, key=lambda item: (-item[1], -item[0]))[:n]


def _pack(vector: Any) -> bytes:
    import numpy as np  # noqa: PLC0415

    return np.asarray(vector, dtype="<f4").tobytes()


def _when(at: str | datetime | None) -> str:
    """`at` as the store's ISO 8601 UTC text (None: now)."""
    if at is None:
        return _now()
    if isinstance(at, str):
        try:
            at = datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError as e:
            raise ValueError(_("at is a time, e.g. '2026-05-14T09:00:00+00:00' or a "
                               "datetime, got {value}").format(value=repr(at))) from e
    if not isinstance(at, datetime):
        raise ValueError(_("at is a datetime or ISO 8601 text, got {value}").format(
            value=repr(at)))
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _check_memory_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(_("a memory is a non-empty text, got {value}").format(value=repr(text)))
    check_storable(_("the memory text"), text)
    return text.strip()


# ----------------------------------------------------------------- updates by meaning

SAME_WITHIN = 0.90  # two facts in one language: the same thing from this similarity on
SAME_ACROSS = 0.65  # one in Chinese, one not: translations score lower (benchmarks/updates.py)
_VALUE = re.compile(r"[0-9]+(?:[.,:/-][0-9]+)*|[零〇一二两三四五六七八九十百千万亿]+(?=[元块岁次年月日号个天点分公米斤人本])")
MASK = "#"
_PUNCT = re.compile(r"[^\w\s]|_")


def normal_subject(subject: str) -> str:
    """A subject as it is compared: full-width forms made plain (NFKC: "ＴＲＩＰ" is "TRIP"),
    case folded, punctuation and repeated spaces dropped, English plurals made singular
    ("Trip  Budgets." and "trip budget" are one subject)."""
    plain = _PUNCT.sub(" ", unicodedata.normalize("NFKC", subject).casefold())
    words = []
    for word in plain.split():
        if len(word) > 3 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.append(word)
    return " ".join(words)


def masked(text: str) -> str:
    """`text` with its values (numbers, Chinese numerals before a unit) as "#": a new value
    of the same attribute ("3000 yuan" → "5000 yuan") then reads the same."""
    return _VALUE.sub(MASK, unicodedata.normalize("NFKC", text))


def _field(fact: Any, name: str) -> Any:
    return fact.get(name) if isinstance(fact, Mapping) else getattr(fact, name, None)


def same_thing(old: Any, new: Any, similar: Callable[[str, str], float]) -> bool:
    """Does the newer fact `new` say something about the same thing as `old` (so it
    replaces it)? Facts have a text and a subject (None: unnamed), as attributes or keys;
    `similar(a, b)` is the cosine of the two texts' vectors.

    - Both name a subject: the subjects decide. The same once normalised (normal_subject),
      or close in meaning ("budget for the trip" / "trip budget" / "旅行预算").
    - Otherwise the texts decide, with their values masked ("My trip budget is # yuan"):
      the same text, or close in meaning.

    "Close" depends on the languages: two texts in one language are the same thing from a
    similarity of SAME_WITHIN (0.90) on, an English and a Chinese one from SAME_ACROSS
    (0.65), because a translation never scores as high as a rewording. The threshold is
    high on purpose: "My budget for the trip is 3000 yuan" and "My rent budget is 4000
    yuan" score 0.80 with their values masked, and a wrong merge loses a fact, while a
    missed one leaves both, dated, for the model to weigh (benchmarks/updates.py measures
    both errors)."""
    old_subject, new_subject = _field(old, "subject"), _field(new, "subject")
    if old_subject and new_subject:
        a, b = normal_subject(old_subject), normal_subject(new_subject)
    else:
        a, b = masked(_field(old, "text")).strip(), masked(_field(new, "text")).strip()
        a, b = " ".join(a.casefold().split()), " ".join(b.casefold().split())
    if a == b:
        return True
    across = chinese(a) != chinese(b)
    return similar(a, b) >= (SAME_ACROSS if across else SAME_WITHIN)


def update_rule(stored: Sequence[Mapping], new: Mapping,
                similar: Callable[[str, str], float]) -> list[dict]:
    """What the memory holds after `new` is written: `stored` and `new` are facts, dicts
    with "text", "subject" (or None) and "at" (ISO 8601 date). The stored facts about the
    same thing as `new` (same_thing) and `new` become ONE fact: the newest one's text, with
    the newest date (a restated fact is as new as its latest saying; a late-arriving older
    fact never overwrites a newer one). The others stay as they were, in their order; the
    merged fact comes last. This is the rule LongTermMemory.write applies to user facts."""
    same = [fact for fact in stored if same_thing(fact, new, similar)]
    kept = [dict(fact) for fact in stored if not any(fact is s for s in same)]
    newest = max([new, *same], key=lambda fact: fact["at"])  # equal dates: the new one
    merged = dict(newest)
    if not merged.get("subject"):
        merged["subject"] = next((f.get("subject") for f in [new, *same] if f.get("subject")),
                                 None)
    return [*kept, merged]


# ----------------------------------------------------------------- into the request

CONTEXT_HEAD = N_("Long-term memory, found for the user's latest message. Each line: date "
                  "[source, where]; [user] is the user's own words. Newest first; when two "
                  "disagree, the newer is right. If none answers, say you don't know:")


def _context_line(memory: Memory) -> str:
    where = f", {memory.ref}" if memory.ref else ""
    return f"- {memory.created_at[:10]} [{memory.source}{where}] {memory.text}"


def context_message(hits: Iterable[Hit | Memory],   # best first, as search() returns them
                    budget: int,                    # tokens the message may cost at most
                    head: str | None = None,        # its first line; None: CONTEXT_HEAD in
                    ) -> dict | None:               # the language spoken (a model reads it)
    """The hits as one labelled system message for the request, costing at most `budget`
    tokens (tokens.count_messages of the message alone): the hits are taken best first, and
    one that would not fit is left out (a smaller one after it may still fit); the lines are
    then listed newest first, each with its date and source. None when no hit fits: no
    empty block is sent."""
    from lesson_lib.tokens import count_messages  # noqa: PLC0415

    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ValueError(_("budget is a number of tokens, got {value}").format(
            value=repr(budget)))
    kept: list[Memory] = []
    first = _(CONTEXT_HEAD) if head is None else head

    def message(memories: list[Memory]) -> dict:
        ordered = sorted(memories, key=lambda x: (x.created_at, x.id), reverse=True)
        return {"role": "system",
                "content": "\n".join([first, *map(_context_line, ordered)])}

    for hit in hits:
        memory = hit.memory if isinstance(hit, Hit) else hit
        if count_messages([message([*kept, memory])]) <= budget:
            kept.append(memory)
    return message(kept) if kept else None


def recall(question: str, memory: LongTermMemory, budget: int, *, k: int = 5,
           method: str = DEFAULT_METHOD,
           min_score: float | None = MIN_SCORE,  # the least cosine a hit needs (search's)
           head: str | None = None,  # the context's first line (None: context_message's)
           ) -> dict | None:
    """Retrieval before the call: the `k` memories that best answer `question`, as the
    labelled system message `context_message` makes (at most `budget` tokens), or None:
    None too when no memory reaches `min_score` (search's floor), so a question nothing
    answers is sent without a context to misread."""
    return context_message(memory.search(question, k, method=method, min_score=min_score),
                           budget, head)


def with_context(messages: Sequence[Mapping], context: Mapping | None) -> list[dict]:
    """A copy of `messages` for the request, with `context` (a system message) placed just
    before the latest user message: next to the question it was retrieved for, and never
    between an assistant's tool call and its results. The stored history is not changed;
    None adds nothing."""
    out = [dict(m) for m in messages]
    if context is None:
        return out
    if context.get("role") != "system":
        raise ValueError(_("the context is a system message, got role {role}").format(
            role=repr(context.get("role"))))
    users = [i for i, m in enumerate(out) if m.get("role") == "user"]
    at = users[-1] if users else len(out)
    return [*out[:at], dict(context), *out[at:]]
