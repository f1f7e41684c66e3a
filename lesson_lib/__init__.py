"""lesson_lib: the companion package of the agent-memory notebook series.

Modules, one idea each (named in the lessons' words):
protocol (the API's rules), tokens (counting), memory (ShortTermMemory and trims),
tools (the tool registry and the seed tools), llm (chat() on the chosen backend),
agent (Agent and the agent loop), offline (the offline teaching model),
display (message lists as pictures), clock (a clock tests can freeze).
"""

__version__ = "0.1.0"
