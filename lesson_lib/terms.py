"""The words a text is searched by: one analyser for the long-term store's lexical index
(lesson_lib.longterm) and for the offline model reading the memories it is given
(lesson_lib.offline.recall), so a question and a memory are cut the same way everywhere.

English (and any spaced language): words lower-cased, stop words dropped, a light suffix
stemming. Numbers as they are. Chinese has no spaces: each run of Chinese characters
becomes its overlapping character pairs ("我喜欢喝咖啡" → 我喜, 喜欢, 欢喝, 喝咖, 咖啡), so a
two-character word such as 咖啡 is found inside any sentence (FTS5's unicode61 tokenizer
would keep the whole run as one token; its trigram tokenizer misses two-character
queries).
"""

from __future__ import annotations

import re
import unicodedata

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUNS = re.compile(rf"([{_CJK}]+)|((?:(?![{_CJK}])[^\W_])+)")
STOP_WORDS = frozenset("""
a about above after again all am an and any are as at be been before being below between
both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its just me more most my no nor not
now of off on once only or other our ours out over own same she should so some such than
that the their theirs them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours
s t don didn doesn isn wasn weren won shall may might must let lets ok also
""".split())


_HAN = re.compile(f"[{_CJK}]")


def chinese(text: str) -> bool:
    """Is `text` written, at least in part, in Chinese characters? (The line the offline
    embedder's cosines are measured across: lesson_lib.longterm's search and update rule.)"""
    return _HAN.search(text) is not None


def stem(word: str) -> str:
    """A light English suffix stripper, the same for memories and questions: trips → trip,
    decided/deciding/decides → decid. Not a linguist's stemmer; it only has to agree with
    itself."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for suffix, replace in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""),
                            ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not (
                suffix == "s" and word.endswith(("ss", "us", "is"))):
            word = word[: len(word) - len(suffix)] + replace
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def terms(text: str) -> list[str]:
    """The lexical index's terms of `text`, in order: English (and any spaced language)
    words lower-cased, stop words dropped, stemmed; numbers as they are; each run of
    Chinese characters as its overlapping pairs (a lone character as itself)."""
    out: list[str] = []
    for cjk, word in _RUNS.findall(unicodedata.normalize("NFKC", text).lower()):
        if cjk:
            out.extend([cjk] if len(cjk) == 1 else
                       [cjk[i:i + 2] for i in range(len(cjk) - 1)])
        elif word not in STOP_WORDS:
            out.append(stem(word))
    return out
