# Notebook 07, exercise 1: a summarizer that carries the user's name from summary to summary.
# Checked by: lesson_lib.exercises.nb07.check_my_summarizer(my_summarizer)
import re


def my_summarizer(messages):
    name = None
    asked = []
    for message in messages:
        text = message.get("content") or ""
        if message["role"] == "system":  # the previous summary: keep what it knew
            found = re.search(r"the user's name is ([^.;]+)", text)
            name = found[1] if found else name
        elif message["role"] == "user":
            found = re.search(r"\bmy name is ([^.!?,]+)", text, re.IGNORECASE)
            name = found[1].strip() if found else name
            asked.append(text)
    facts = [f"the user's name is {name}" if name else "the user has not said their name"]
    if asked:
        facts.append(f"they last asked: {asked[-1]}")
    return "Summary so far: " + "; ".join(facts) + "."
