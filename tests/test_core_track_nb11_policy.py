"""The core track, notebook 11: the rules that judge a learner's write policy,
`should_store(fact, messages) -> bool` (the user's own words, plainly, with the same yes or
no, of the user), on cases of lesson_lib/data/write_policy_dev.json; the library's own
policy (lesson_lib.write_policy.supports) keeps them too, but the last (it decides itself).

TestShouldStore gets the tests every core exercise gets (tests/core_track_support.py): two
correct versions written here by different approaches (a class that looks at the words
before the fact's content, and a function of templates anchored on "I" / 我), and the bank
of wrong versions a learner really writes, each a one-step change of the class.
"""

from __future__ import annotations

import re

from core_track_support import CoreTrack, what_happened

from lesson_lib.exercises import nb11
from lesson_lib.longterm import said_by_user
from lesson_lib.write_policy import supports

# ----------------------------------------------------------------- a correct policy, and its parts

OTHERS_EN = r"brother|sister|wife|husband|friend|mom|mother|dad|father|boss|son|daughter"
OTHERS_ZH = r"朋友|妈|爸|老公|老婆|同事|儿子|女儿|哥|姐|弟|妹|室友"


class Policy:
    """A correct write policy, written apart from lesson_lib's: the fact's content (its
    words, each Chinese character a word) must all be in one of the user's sentences; the
    words before it there name the user (or nobody), not someone else; the sentence neither
    asks nor supposes; it says "not" as often as the fact does (odd or even). Each wrong
    version below overrides one step."""

    __name__ = "should_store"
    NEG_EN = r"\b(?:not|never|no)\b|n't\b"
    NEG_ZH = r"不|没"
    FILLER = {"the", "user", "user's", "is", "am", "are", "a", "an", "does", "do", "i", "i'm",
              "用", "户", "的", "是", "我"}

    def __call__(self, fact, messages):
        wanted = self.content(fact)
        for text in self.user_texts(messages):
            for sentence in self.sentences(self.unquote(text)):
                where = self.found(wanted, sentence)
                if where is None or self.asks(sentence) or self.supposes(sentence):
                    continue
                if self.someone_else(sentence[:where]):
                    continue
                if self.negated(sentence) == self.negated(fact):
                    return True
        return False

    def user_texts(self, messages):
        return [m["content"] for m in messages if m.get("role") == "user"]

    def unquote(self, text):
        return re.sub(r"\"[^\"]*\"|“[^”]*”", " ", text)

    def sentences(self, text):
        return [s for s in re.split(r"(?<=[.!?。！？])\s*", text.lower()) if s.strip()]

    def tokens(self, text):
        return re.findall(r"[a-z0-9']+|[\u4e00-\u9fff]", text.lower())

    def content(self, fact):
        bare = re.sub(self.NEG_EN, " ", re.sub(self.NEG_ZH, " ", fact.lower()))
        return [t for t in self.tokens(bare) if t not in self.FILLER]

    def found(self, wanted, sentence):
        """Where the first of the fact's words stands in the sentence; None: not all there."""
        said = self.tokens(re.sub(self.NEG_EN, " ", sentence))
        if not wanted or not set(wanted) <= set(said):
            return None
        return min(sentence.find(t) for t in wanted)

    def asks(self, sentence):
        return sentence.rstrip().endswith(("?", "？")) or "吗" in sentence

    def supposes(self, sentence):
        return bool(re.search(r"\b(?:if|suppose|would)\b|如果|假如|要是", sentence))

    def someone_else(self, before):
        return bool(re.search(rf"\b(?:my|our|his|her) (?:{OTHERS_EN})\b|\b(?:he|she|they)\b"
                              rf"|我(?:的)?(?:{OTHERS_ZH})|他|她", before))

    def negated(self, text):
        count = len(re.findall(self.NEG_EN, text.lower())) + len(re.findall(self.NEG_ZH, text))
        return count % 2 == 1


FILLER_WORDS = r"(?:really |also |just |honestly |actually )?"


def templated(fact, messages):
    """A correct policy by templates: the fact becomes "I (not) <what it says>" / "我(不)<…>",
    and one of the user's sentences (quotes taken out) must hold it right after the user's
    own I or 我, with no question mark, no if, no 如果."""
    text = fact.strip().rstrip(".。")
    no = bool(re.search(r"\bnot\b|\bnever\b|n't|不|没", text))
    core = re.sub(r"^(?:the user(?:'s)?|用户(?:的)?)\s*", "", text, flags=re.I)
    core = re.sub(r"^(?:is|does|has)\s+", "", core, flags=re.I)
    core = re.sub(r"^(?:not|never)\s+|^(?:不|没有|没)", "", core, flags=re.I)
    core = re.sub(r"\bnot\s+|\bnever\s+", "", core, flags=re.I).strip()
    if not core:
        return False
    words = r"\W+".join(re.escape(w[:-1] if w.endswith("s") and len(w) > 3 else w)
                        for w in re.findall(r"[\w']+", core.lower()))
    pattern = re.compile(
        rf"(?:^|\W)(?:i|i'm|i am|i've|我|我的)\s*{FILLER_WORDS}"
        rf"(?:(?P<no>not|don't|do not|never|doesn't|不|没有|没)\s*)?(?:a |an |是)?\s*{words}"
        if re.search(r"[a-z]", core.lower()) else
        rf"(?:^|[^\u4e00-\u9fff])我(?:的)?(?P<no>不|没有|没)?(?:是)?{words}")
    for message in messages:
        if message.get("role") != "user":
            continue
        said = re.sub(r"\"[^\"]*\"|“[^”]*”", " ", message.get("content") or "").lower()
        for sentence in re.findall(r"[^.!?。！？]+[.!?。！？]*", said):
            if sentence.strip().endswith(("?", "？")) or "吗" in sentence:
                continue
            if re.search(r"\b(?:if|suppose|would)\b|如果|假如|要是", sentence):
                continue
            hit = pattern.search(sentence)
            if hit and bool(hit.group("no")) == no:
                return True
    return False


templated.__name__ = "should_store"


class Skeleton:
    """The notebook's starting point."""
    __name__ = "should_store"

    def __call__(self, fact, messages):
        raise NotImplementedError


# ----------------------------------------------------------------- the bank of wrong versions

class WordOverlapOnly(Policy):
    """Every word of the fact in a user message: stored (the library's first gate)."""
    def __call__(self, fact, messages):
        wanted = set(self.content(fact))
        return any(wanted <= set(self.tokens(t)) for t in self.user_texts(messages))


class IgnoresNegation(Policy):
    """Compares what is said, never whether it is said with a "not"."""
    def negated(self, text):
        return False


class EnglishNegationOnly(Policy):
    """Knows not, n't and never, but not Chinese 不 and 没."""
    NEG_ZH = r"(?!)"


class NegationMeansNo(Policy):
    """Refuses every sentence with a "not": "I'm not a morning person" stores nothing."""
    def negated(self, text):
        return False

    def asks(self, sentence):
        return super().asks(sentence) or bool(re.search(self.NEG_EN + "|" + self.NEG_ZH,
                                                        sentence))


class IgnoresSomeoneElse(Policy):
    """"My brother lives in Berlin" is taken as the user's."""
    def someone_else(self, before):
        return False


class QuestionsAsStatements(Policy):
    """"Am I allergic to penicillin?" is taken as a statement."""
    def asks(self, sentence):
        return False


class StoresSuppositions(Policy):
    """"Suppose I were a teacher" is taken as a fact."""
    def supposes(self, sentence):
        return False


class BelievesQuotes(Policy):
    """A quoted "remember that the user …" is taken as the user's words."""
    def unquote(self, text):
        return text


class ReadsEveryMessage(Policy):
    """A tool result or the assistant saying it counts as the user's word."""
    def user_texts(self, messages):
        return [m["content"] for m in messages if isinstance(m.get("content"), str)]


class AnyWordInCommon(Policy):
    """A few words in common are enough ("allergic to sesame" / "allergic to mangoes")."""
    def found(self, wanted, sentence):
        said = set(self.tokens(sentence))
        common = [t for t in wanted if t in said]
        return min(sentence.find(t) for t in common) if common else None


class ChineseAsWords(Policy):
    """Splits on spaces, so a Chinese sentence is one long word."""
    def tokens(self, text):
        return re.findall(r"[^\s.,!?。！？，]+", text.lower())


class ReturnsALabel(Policy):
    """Answers "store" or "skip", not True or False."""
    def __call__(self, fact, messages):
        return "store" if super().__call__(fact, messages) else "skip"


def wraps_said_by_user(fact, messages):
    """The library's gate, wrapped: right answers, nothing of the exercise written."""
    return said_by_user(fact, messages)


def wraps_the_policy(fact, messages):
    return supports(fact, messages)


def raises_a_typo(fact, messages):
    for message in messages:
        if message["role"] == "user" and fact.lower() in message["contnet"].lower():  # typo
            return True
    return False


class TestShouldStore(CoreTrack):
    rules = nb11.POLICY_RULES
    check = nb11.check_should_store
    library = [supports]
    library_rules = nb11.POLICY_RULES[:-1]  # the library's policy is the gate itself
    right = [Policy(), templated]
    wrong = {
        WordOverlapOnly(): "a negation is kept as said",
        IgnoresNegation(): "a negation is kept as said",
        NegationMeansNo(): "a negation is kept as said",
        EnglishNegationOnly(): "a Chinese negation",
        IgnoresSomeoneElse(): "what the user says of someone else",
        QuestionsAsStatements(): "a question states nothing",
        StoresSuppositions(): "a supposition is not a fact",
        BelievesQuotes(): "words inside quotation marks",
        ReadsEveryMessage(): "only the user's own messages count",
        AnyWordInCommon(): "a fact the user never said is refused",
        ChineseAsWords(): "the user's plain statement is stored",
        ReturnsALabel(): "it answers True or False",
        wraps_said_by_user: "should_store decides itself",
        wraps_the_policy: "should_store decides itself",
    }
    skeleton = Skeleton()
    hinted = EnglishNegationOnly()
    hint_steps = [("what happened: should_store('用户喝酒', [user: 我不喝酒。]) returned True",
                   "Chinese says not with"),
                  ("Chinese says not with", "the characters of 喝酒 are all there"),
                  ("the characters of 喝酒 are all there", None)]
    typo = staticmethod(raises_a_typo)
    typo_says = ["KeyError", "of raises_a_typo()"]
    misgiven = [..., None, Policy]
    misgiven_says = "not done yet"


# ----------------------------------------------------------------- what only this exercise has

def test_the_cases_come_from_the_development_set_and_agree_with_its_labels():
    """Every case a rule offers is a development case (or one of its conversations), and
    the right answer the rule expects is the one the library's policy gives."""
    cases = nb11._dev_cases()
    assert len(cases) >= 80
    for rule in nb11.POLICY_RULES:
        assert rule.verdict(supports) is None or rule is nb11.POLICY_RULES[-1], rule.name


def test_what_happened_names_the_fact_the_conversation_and_the_answer():
    seen = what_happened(IgnoresSomeoneElse(), nb11.POLICY_RULES, "what the user says of")
    assert "should_store('The user lives in Berlin', [user: My brother lives in Berlin.])" \
        in seen and "returned True, not False" in seen, seen


def test_each_mistake_s_hint_names_it(capsys):
    """The first hint step each wrong version is shown names its mistake."""
    named = {WordOverlapOnly(): "comparing words is not enough",
             EnglishNegationOnly(): "Chinese says not with 不 and 没",
             IgnoresSomeoneElse(): "who says it is not who it is about",
             QuestionsAsStatements(): "asks; it does not say",
             StoresSuppositions(): "'Suppose I were a teacher' is not 'I am a teacher'",
             BelievesQuotes(): "to warn you about it",
             ReadsEveryMessage(): "whose role is 'user'",
             AnyWordInCommon(): "a few words in common are not enough",
             ChineseAsWords(): "Chinese has no spaces",
             ReturnsALabel(): "not a label such as 'store'",
             wraps_said_by_user: "the library's answer to this exercise"}
    for wrong, words in named.items():
        for _ in range(3):  # every step of its hint
            nb11.check_should_store(wrong)
        out = capsys.readouterr().out
        assert words in out, (type(wrong).__name__, out)


def test_the_check_speaks_chinese(capsys):
    from lesson_lib.i18n import use_language

    use_language("zh")
    try:
        for _ in range(2):
            assert nb11.check_should_store(EnglishNegationOnly()) is False
        out = capsys.readouterr().out
        assert "动手做 · should_store" in out and "中文的否定（不、没）也算" in out, out
        assert "返回了 True，而不是 False" in out and "中文用 不 和 没" in out, out
        assert nb11.check_should_store(Policy()) is True
    finally:
        use_language(None)
