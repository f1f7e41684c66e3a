# Notebook 10, exercise 2: delete every session of one user, and say how many.
# Checked by: lesson_lib.exercises.nb10.check_forget_user(forget_user)


def forget_user(store, user_id):
    """Delete all of `user_id`'s sessions, their rows included; return how many."""
    sessions = store.list_sessions(user_id)  # read the list once, before deleting from it
    for info in sessions:
        store.delete_session(info.session_id)  # the rows go, not just the messages
    return len(sessions)
