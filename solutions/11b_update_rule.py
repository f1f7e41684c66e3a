# Notebook 11b, Build it: update_rule, a newer fact replaces the older one about the same thing
# Checked by: lesson_lib.exercises.nb11.check_update_rule(my_update_rule)
import re
import unicodedata

WITHIN, ACROSS = 0.90, 0.65  # a translation scores lower than a rewording
NUMBER = re.compile(r"\d+(?:[.,]\d+)*|[一二两三四五六七八九十百千万]+(?=[元岁个天])")
HAN = re.compile(r"[\u4e00-\u9fff]")


def plain(subject):
    """'ＴＲＩＰ  Budgets.' -> 'trip budget'."""
    words = re.sub(r"[^\w\s]", " ", unicodedata.normalize("NFKC", subject).casefold()).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                    for w in words)


def about_same(old, new, similar):
    if old["subject"] and new["subject"]:
        a, b = plain(old["subject"]), plain(new["subject"])
    else:  # the texts decide, values masked: "my trip budget is # yuan"
        a = " ".join(NUMBER.sub("#", unicodedata.normalize("NFKC", old["text"])).lower().split())
        b = " ".join(NUMBER.sub("#", unicodedata.normalize("NFKC", new["text"])).lower().split())
    if a == b:
        return True
    across = bool(HAN.search(a)) != bool(HAN.search(b))
    return similar(a, b) >= (ACROSS if across else WITHIN)


def my_update_rule(stored, new, similar):
    same = [fact for fact in stored if about_same(fact, new, similar)]
    others = [fact for fact in stored if fact not in same]
    newest = max([new, *same], key=lambda fact: fact["at"])  # its text and its date
    return [*others, newest]
