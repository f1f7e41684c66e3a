# Notebook 11, Exercise 2: save_fact, a user fact only when the user said it
# Checked by: lesson_lib.exercises.nb11.check_save_fact(save_fact)
from lesson_lib.longterm import MemoryPoisoningError


def save_fact(memory, text, messages, subject=None):
    """Store `text` as the user's fact if the user's own messages say it: True; else write
    nothing and return False."""
    try:
        memory.remember_user_fact(text, messages, subject=subject)
    except MemoryPoisoningError:
        return False
    return True
