# Notebook 11b, Build it: should_store, a write policy that reads what the user said
# Checked by: lesson_lib.exercises.nb11.check_should_store(should_store)
import re

WHO = re.compile(r"\bthe user(?:'s)?\b|用户(?:的)?")            # who the fact is about
NOT = re.compile(r"\b(?:not|never|no)\b|n't\b|不|没")             # a negation, English or Chinese
OTHERS = re.compile(r"\bmy (?:brother|sister|wife|husband|friend|mom|dad|boss|son|daughter)\b"
                    r"|\b(?:he|she|they)\b|我(?:的)?(?:朋友|妈|爸|老公|老婆|同事|儿子|女儿)|他|她")
SUPPOSE = re.compile(r"\b(?:if|suppose|would)\b|如果|假如|要是")
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
ABOUT = {"i", "i'm", "m", "is", "am", "are", "a", "an", "the", "does", "do", "don", "t",
         "我", "的", "是"}  # little words that say nothing of what the fact is


def words(text):
    """English words, and each Chinese character as a word of its own."""
    return set(re.findall(r"[a-z0-9']+|[\u4e00-\u9fff]", text.lower())) - ABOUT


def should_store(fact, messages):
    """True when one of the user's own sentences says `fact` of the user, plainly, with the
    same yes or no."""
    fact = fact.lower()
    wanted = words(NOT.sub(" ", WHO.sub(" ", fact)))
    for message in messages:
        if message["role"] != "user":
            continue                                   # only the user's own words count
        text = QUOTED.sub(" ", message["content"].lower())  # a quote is someone else's
        for sentence in re.findall(r"[^.!?。！？]+[.!?。！？]*", text):
            if not wanted or not wanted <= words(NOT.sub(" ", sentence)):
                continue                               # it does not say the fact
            if sentence.strip().endswith(("?", "？")) or "吗" in sentence:
                continue                               # a question states nothing
            if SUPPOSE.search(sentence) or OTHERS.search(sentence):
                continue                               # supposed, or someone else's
            if bool(NOT.search(sentence)) == bool(NOT.search(fact)):
                return True                            # the same yes or no
    return False
