"""A strategy file as notebook 13's learners hand it in: their agent, named STRATEGY.

Score it (and a class's files beside it) on the teachers' held-out part:

    .venv/bin/python -m lesson_lib.membench score docs/teachers/13_example_agent.py --part held-out

This is notebook 13's first agent: the library's token-budget trim and recall, in place of
the learner's own `my_budget_trim` (notebook 07b) and `my_recall` (notebook 11), with the
write policy of the notebook (what the user said, and what tools returned).
"""

from lesson_lib.longterm import LongTermMemory, recall, with_context
from lesson_lib.membench import Strategy
from lesson_lib.trimcheck import budget_trim

trim = budget_trim  # or the learner's my_budget_trim (notebook 07b)
find = recall       # or the learner's my_recall (notebook 11)


def worth_writing(message: dict) -> bool:
    """The write policy: what the user said, and what tools returned."""
    return message["role"] in ("user", "tool") and bool(message.get("content"))


class MyAgent(Strategy):
    name = "my agent"
    WINDOW = 150   # tokens of the conversation sent as messages (about a session and a half)
    CONTEXT = 120  # tokens of recalled memories

    def __init__(self, context):
        super().__init__(context)
        self.history, self.to_write = [], []
        self.longterm = LongTermMemory(context.store, context.user_id,
                                       embedder=context.embedder)

    def take(self, message):
        self.history.append(message)
        if worth_writing(message):
            self.to_write.append(message)

    def end_session(self):
        for source in ("user", "tool"):  # written when the session ends, dated
            texts = [m["content"] for m in self.to_write if m["role"] == source]
            if texts:
                self.longterm.write_many(texts, source=source, ref=self.session_id,
                                         at=self.today)
        self.to_write = []

    def request(self, question):
        window = trim([self.system(), *self.history], self.WINDOW)
        return with_context([*window, {"role": "user", "content": question}],
                            find(question, self.longterm, self.CONTEXT))


STRATEGY = MyAgent
