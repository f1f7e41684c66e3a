# Notebook 11, Exercise 1: save_fact, a user fact only when the user said it
# Checked by: lesson_lib.exercises.nb11.check_save_fact(save_fact)
import re

WORDS = re.compile(r"[\w@']+(?:\.[\w@']+)*")  # words, e-mail addresses and "I'm" whole
ABOUT = {"the", "user", "is"}  # who a fact is about ("The user is ..."), not what it says


def save_fact(memory, text, messages, subject=None):
    """Store `text` as the user's fact if the user's own messages say it: True; else write
    nothing and return False."""
    wanted = set(WORDS.findall(text.lower())) - ABOUT
    for message in messages:
        if message["role"] != "user":
            continue  # a tool result or the assistant saying it is not the user's word
        if wanted <= set(WORDS.findall((message.get("content") or "").lower())):
            memory.write(text, source="user", subject=subject)  # a newer fact replaces it
            return True
    return False
