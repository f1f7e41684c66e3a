# Notebook 04, exercise 2: exercise 1's trim, and the kept history starts with a user message.
# Checked by: lesson_lib.exercises.nb04.check_turn_trim(my_turn_trim)


def my_turn_trim(messages, max_messages):
    """Like my_trim, but the kept history starts at a user message."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    turn = messages[last_user:]
    groups = []
    for m in messages[:last_user]:
        if m["role"] == "tool" and groups:
            groups[-1].append(m)
        else:
            groups.append([m])

    def first_is_not_a_question():
        first = next((g for g in groups if g[0]["role"] != "system"), None)
        return first is not None and first[0]["role"] != "user"

    while sum(len(g) for g in groups) + len(turn) > max_messages or first_is_not_a_question():
        oldest = next((k for k, g in enumerate(groups) if g[0]["role"] != "system"), None)
        if oldest is None:
            break
        del groups[oldest]
    return [m for g in groups for m in g] + list(turn)
