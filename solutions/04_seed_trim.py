# Notebook 04, Build it: the seed's trim (drop the oldest non-system message and its tool replies).
# Checked by: lesson_lib.exercises.nb04.check_seed_trim(MyMemory)
import copy


class MyMemory:
    """Notebook 02's memory; its trim now takes a dropped message's tool replies with it."""

    def __init__(self, max_messages=40):
        self.max_messages = max_messages
        self._messages = []

    def add(self, message):
        self._messages.append(copy.deepcopy(message))
        self._trim()

    def to_api_format(self):
        return copy.deepcopy(self._messages)

    def clear_non_system(self):
        self._messages = [m for m in self._messages if m["role"] == "system"]

    def message_count(self):
        return len(self._messages)

    def _trim(self):
        """While there are more than max_messages messages, drop the oldest message that is
        not a system message AND the tool messages right after it."""
        while len(self._messages) > self.max_messages:
            oldest = next((i for i, m in enumerate(self._messages) if m["role"] != "system"),
                          None)
            if oldest is None:
                break  # only system messages are left, and they are never dropped
            end = oldest + 1
            while end < len(self._messages) and self._messages[end]["role"] == "tool":
                end += 1  # a reply of the dropped message: it goes with it
            del self._messages[oldest:end]
