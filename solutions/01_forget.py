# Notebook 01, exercise 3: forget on purpose, a new history without the turns that mention a secret.
# Checked by: lesson_lib.exercises.nb01.check_forget(my_forget)


def my_forget(history, secret):
    """`history` without the turns that mention `secret`."""
    kept = []  # a new list: `history` itself stays as it was
    for k in range(0, len(history), 2):
        turn = history[k:k + 2]  # a user message and the assistant reply right after it
        # the whole turn goes: the reply ("Nice to meet you, Xiaoming!") repeats the secret
        if not any(secret in (m["content"] or "") for m in turn):
            kept += turn
    return kept
