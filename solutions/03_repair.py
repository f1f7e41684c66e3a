# Notebook 03, exercise 2: repair a broken history by moving each tool message after its call.
# Checked by: lesson_lib.exercises.nb03.check_repair(my_repair)


def my_repair(messages: list[dict]) -> list[dict]:
    """The same conversation, with every tool message right after the call it answers."""
    replies = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}  # by call id
    repaired = []  # a new list: the one given stays as it was
    for m in messages:
        if m["role"] == "tool":
            continue  # placed below, after the assistant message whose call it answers
        repaired.append(m)  # every other message keeps its order: move, never drop
        for call in m.get("tool_calls") or []:
            if call["id"] in replies:
                repaired.append(replies[call["id"]])
    return repaired
