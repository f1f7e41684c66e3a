# Notebook 10, exercise 2: forget a user in every layer the agent keeps them, and say what went.
# Checked by: lesson_lib.exercises.nb10.check_forget_user(forget_user)

from lesson_lib.longterm import LongTermMemory


def forget_user(store, user_id):
    """Delete everything of `user_id`: every session (its rows, messages and repairs), the
    whole profile (every value each key ever had) and every long-term memory (filed under a
    session or not). Each layer's own call deletes: on SQLite they overwrite what they free
    and empty the WAL into the file. Returns how much went, per layer."""
    sessions = store.list_sessions(user_id)  # read the list once, before deleting from it
    for info in sessions:
        store.delete_session(info.session_id)  # the rows go, not just the messages
    profile = store.profile(user_id)
    values = sum(profile.forget(key) for key in profile.as_dict())  # each key, its history too
    memories = LongTermMemory(store, user_id).clear()  # every memory, whatever it says
    return {"sessions": len(sessions), "profile values": values, "memories": memories}

# The library's version, lesson_lib.forgetting.forget_user(store, user_id), does the same in
# ONE transaction (an error halfway leaves nothing half-forgotten), also deletes the memory
# change log's rows that name the user, and proves the result: print(report) shows what went
# and what the search of every layer and every file found left.
