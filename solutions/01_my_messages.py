# Notebook 01, exercise 1: the messages for the next call, the conversation so far and the question.
# Checked by: lesson_lib.exercises.nb01.check_my_messages(my_messages)


def my_messages(turns, question):
    """The messages for the next call: the conversation so far, then `question`."""
    messages = []
    for user_text, assistant_text in turns:  # oldest turn first
        messages.append({"role": "user", "content": user_text})
        # the model's own reply too: it keeps nothing between calls, not even what it said
        messages.append({"role": "assistant", "content": assistant_text})
    messages.append({"role": "user", "content": question})  # the new question last
    return messages
