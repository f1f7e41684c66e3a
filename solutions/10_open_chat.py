# Notebook 10, exercise 1: resume the user's session with that title, or start it.
# Checked by: lesson_lib.exercises.nb10.check_open_chat(open_chat)


def open_chat(store, user_id, title):
    """The memory of `user_id`'s session called `title`: resumed when it exists (its window
    filled from the stored log), else a new session."""
    for info in store.list_sessions(user_id):  # this user's sessions only
        if info.title == title:
            return store.resume(info.session_id)
    return store.create_session(user_id, title=title).memory()
