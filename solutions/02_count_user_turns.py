# Notebook 02, exercise 3: count the user's turns by role, whatever a tool round adds.
# Checked by: lesson_lib.exercises.nb02.check_count_user_turns(count_user_turns)


def count_user_turns(memory):
    """How many user messages the memory holds."""
    # a turn is not always two messages (a tool round adds four), so count roles, not
    # messages; to_api_format() is a copy, so reading it cannot change the memory
    return sum(1 for m in memory.to_api_format() if m["role"] == "user")
