# Notebook 02, Build it: your own ShortTermMemory, one list and its first, simple trim.
# Checked by: lesson_lib.exercises.nb02.check_my_memory(MyMemory)
import copy


class MyMemory:
    """The agent's short-term memory: the messages list sent on every call."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages  # the most messages kept (system ones always are)
        self._messages = []               # the memory itself, oldest message first

    def add(self, message):
        """Store a copy of `message` at the end, then trim."""
        self._messages.append(copy.deepcopy(message))  # the caller keeps their own dict
        self._trim()

    def _trim(self):
        """While there are more than max_messages messages, drop the oldest one whose role
        is not 'system'."""
        while len(self._messages) > self.max_messages:
            oldest = None
            for i, message in enumerate(self._messages):
                if message["role"] != "system":
                    oldest = i
                    break
            if oldest is None:
                return  # only system messages left: they are never dropped
            del self._messages[oldest]

    def to_api_format(self):
        """The messages to send: a copy, so changing it never changes the memory."""
        return copy.deepcopy(self._messages)

    def clear_non_system(self):
        """Forget the conversation; keep every system message, where it was."""
        self._messages = [m for m in self._messages if m["role"] == "system"]

    def message_count(self):
        """How many messages the memory holds, system ones included."""
        return len(self._messages)
