# Notebook 02, exercise 2: predict message_count() after a trim, and after a clear.
# Checked by: lesson_lib.exercises.nb02.check_prediction(first, second)

# Six messages go in (the system prompt and five more), but max_messages=4 caps the memory:
# from the fifth add on, each add() trims the oldest non-system message, so 4 are left.
first = 4
# clear_non_system() keeps only the system prompt (1), and one user message is added (2).
second = 2
