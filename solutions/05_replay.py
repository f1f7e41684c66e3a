# Notebook 05, exercise 2: replay inputs through an agent, "/clear" a command, counting messages.
# Checked by: lesson_lib.exercises.nb05.check_replay(replay)


def replay(agent, inputs):
    """Feed each input to `agent`; the message count after each one."""
    counts = []
    for text in inputs:
        if text.strip().lower() == "/clear":
            agent.clear()    # a command, as in the terminal chat: the model never sees it
        else:
            agent.chat(text)
        counts.append(agent.memory.message_count())  # read from the memory, never written in
    return counts
