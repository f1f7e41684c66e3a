# Notebook 04, exercise 1: a trim the API accepts, keeping the system messages and the current turn.
# Checked by: lesson_lib.exercises.nb04.check_my_trim(my_trim)


def my_trim(messages, max_messages):
    """Return a trimmed copy of `messages` that the API accepts."""
    # the current turn: the latest user message and everything after it, kept whole
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    turn = messages[last_user:]
    # before it, groups: one message, or an assistant(tool_calls) with its tool replies
    groups = []
    for m in messages[:last_user]:
        if m["role"] == "tool" and groups:
            groups[-1].append(m)
        else:
            groups.append([m])
    # drop the oldest group that is not a system message until the list fits
    while sum(len(g) for g in groups) + len(turn) > max_messages:
        oldest = next((k for k, g in enumerate(groups) if g[0]["role"] != "system"), None)
        if oldest is None:
            break  # the system messages and the current turn are all that is left
        del groups[oldest]
    return [m for g in groups for m in g] + list(turn)
