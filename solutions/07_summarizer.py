# Notebook 07, exercise 1: a summarizer that carries the user's name from summary to summary.
# Checked by: lesson_lib.exercises.nb07.check_my_summarizer(my_summarizer)
import re


def my_summarizer(messages):
    name = None
    asked = []
    chinese = False
    for message in messages:
        text = message.get("content") or ""
        if message["role"] == "system":  # the previous summary: keep what it knew
            found = re.search(r"the user's name is ([^.;]+)|用户叫([^。；]+)", text)
            name = (found[1] or found[2]) if found else name
        elif message["role"] == "user":
            found = re.search(r"\bmy name is ([^.!?,]+)|我叫([^。！？，,.!?]+)", text, re.IGNORECASE)
            name = (found[1] or found[2]).strip() if found else name
            asked.append(text)
            chinese = chinese or bool(re.search(r"[\u4e00-\u9fff]", text))
    if chinese:  # the summary in the language the user speaks
        facts = [f"用户叫{name}" if name else "用户还没说自己的名字"]
        if asked:
            facts.append(f"最近问的是：{asked[-1]}")
        return "目前的摘要：" + "；".join(facts) + "。"
    facts = [f"the user's name is {name}" if name else "the user has not said their name"]
    if asked:
        facts.append(f"they last asked: {asked[-1]}")
    return "Summary so far: " + "; ".join(facts) + "."
