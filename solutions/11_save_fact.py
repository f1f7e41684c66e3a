# Notebook 11, Exercise 1: save_fact, a user fact only when the user said it
# Checked by: lesson_lib.exercises.nb11.check_save_fact(save_fact)
import re

# words, e-mail addresses and "I'm" whole; Chinese, which has no spaces, character by character
WORDS = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9_@']+(?:\.[A-Za-z0-9_@']+)*")
ABOUT = {"the", "user", "is", "用", "户"}  # who a fact is about ("The user is …", "用户…")


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
