"""The memory benchmark: dated multi-session conversations, questions asked in later sessions, and a model-free score.

An agent's memory is judged here by what it *sends*: for each question, is the evidence
the question needs in the request the agent makes for it (its messages, recalled context,
summary, profile, system prompt), how many tokens that request costs, and how long the
agent took to build it. No model has to answer, so any run can be scored offline, and
every memory strategy of the series stands in one table (`benchmarks/memory_bench.py`).

- `data`: the frozen conversations (`load()`; the held-out part, `load("held-out")`, is
  for teachers and no lesson shows it) and the checks of their shape.
- `score`: the rule that judges a request (`score_request`), and the judge rule of
  answers when a real provider answers.
- `strategies`: what a strategy is (`Strategy`: start a session, take a message, build
  the request for a question) and every strategy of the series, with three combinations.
- `run`: running strategies over the data through the real `openai` SDK, recording the
  request on the wire; `table()` and `plot()` of the results, `misses()` of one run.
- `grade`: a learner's strategy from its file (`STRATEGY`), checked against the interface
  and scored: `python -m lesson_lib.membench score FILE --part held-out`.
"""

from lesson_lib.membench.data import CATEGORIES, LANGUAGES, load, problems
from lesson_lib.membench.run import misses, plot, run, run_all, table
from lesson_lib.membench.score import request_text, score_request
from lesson_lib.membench.strategies import STRATEGIES, Strategy

__all__ = ["CATEGORIES", "LANGUAGES", "STRATEGIES", "Strategy", "load", "misses", "plot", "problems",
           "request_text", "run", "run_all", "score_request", "table"]
