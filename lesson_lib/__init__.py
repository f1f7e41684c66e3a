"""lesson_lib: the companion package of the agent-memory notebook series.

Modules, one idea each (named in the lessons' words):
protocol (the API's rules), tokens (counting), memory (ShortTermMemory and trims),
budget (token-budget memory, summaries), repair (fixing broken histories),
trimcheck (a bank of hard histories to judge a trim), tools (the tool registry and
the seed tools), llm (chat() on the chosen backend), agent (Agent and the agent
loop), offline (the offline teaching model), display (message lists as pictures),
app and stepper (the chat app and the classroom stepper), costs (the
scripted 50-turn conversation and its cost plots), places (city names and
time zones), clock (a clock tests can freeze), exercises (the notebooks' self-checks).
"""

__version__ = "0.1.0"

import sys as _sys

# jsonschema (used to check tool schemas and arguments) imports the optional package
# rfc3987_syntax when it is installed (jupyterlab pulls it in); that package compiles
# dozens of grammars at import, about 3 seconds on every kernel start. We never check
# the IRI formats it serves, so we tell Python it is absent unless something already
# loaded it.
_sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
