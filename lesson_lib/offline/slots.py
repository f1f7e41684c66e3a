"""Typed values in the user's words, found by what a parameter's schema asks for.

understand.fill_arguments reads each parameter's schema (type, enum, format, description,
name) and asks this module for a value of that type: a date ("2026-03-15", "tomorrow",
"明天", "3月15日"), a time ("14:30", "3pm", "下午3点"), a number with its unit ("3 nights",
"两晚", "20%"), a currency code ("euros", "美元" → EUR, USD), a code shaped like the
schema's example (a ticker "AAPL", a flight "CA981", a SKU "AB-1234"), an e-mail address,
a language (as a code "fr" or a name "French", as the schema wants), the two ends of a
route ("from Beijing to Tokyo", "从上海到成都"), a country, an enum value by a synonym
("miles" → "mile", "步行" → "walking"), or the free text that is left.

Every finder returns None when the words do not say it: a value is found or it is not,
never guessed. Whatever a finder takes is *claimed* (blanked in Words.rest), so the same
words do not fill two parameters and the free text is what no other parameter took.
The clock is read through lesson_lib.clock, so "tomorrow" follows a frozen clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from lesson_lib import clock
from lesson_lib.places import find_places, lookup

CJK_RUN = r"[\u4e00-\u9fff]"


@dataclass
class Words:
    """The user's words while parameters are filled: `rest` is the text with the parts
    already taken blanked out ("\x00" marks where), same length as `text`."""
    text: str
    rest: str = ""
    taken: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rest = self.rest or self.text

    def claim(self, start: int, end: int) -> None:
        self.rest = self.rest[:start] + "\x00" * (end - start) + self.rest[end:]
        self.taken.append((start, end))

    def free(self, start: int, end: int) -> bool:
        return "\x00" not in self.rest[start:end]


def today() -> date:
    """Today in the model's home zone, by lesson_lib.clock (which tests can freeze)."""
    return clock.now().date()


# ------------------------------------------------------------------ Chinese numbers

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
CN_NUMBER = r"[零〇一二两三四五六七八九十百]+"
# Words a Chinese number is counted in: classifiers ("三张", "两个") and units ("三天").
CN_CLASSIFIERS = r"[个位名张份杯瓶本部件双首条篇项间封辆台只把次]"
CN_MEASURES = (r"(?:[个位名张份杯瓶本部件双首条篇项间封辆台只把次天晚夜周年岁页元块度米克%句股片粒箱人万千升]|小时|分钟|毫升|"
               r"公里|公斤|千克|星期|个月|美元|欧元|英镑|日元|港币|人民币|英里|英尺|磅)")


def cn_number(word: str) -> int | None:
    """"三" → 3, "十五" → 15, "二十" → 20, "一百二十" → 120; None if it is not one."""
    if not word or any(c not in _CN_DIGITS and c not in "十百" for c in word):
        return None
    total, digit = 0, None
    for char in word:
        if char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        else:
            total += (1 if digit is None else digit) * (10 if char == "十" else 100)
            digit = None
    return total + (digit or 0)


# ------------------------------------------------------------------ dates

_MONTHS = {m: k + 1 for k, names in enumerate(
    ["january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
     "august aug", "september sep sept", "october oct", "november nov", "december dec"])
    for m in names.split()}
_WEEKDAYS = {w: k for k, names in enumerate(
    ["monday 一", "tuesday 二", "wednesday 三", "thursday 四", "friday 五", "saturday 六",
     "sunday 日 天"]) for w in names.split()}  # no "sun", "sat": "when does the sun set"
_MONTH_WORDS = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_WORDS = "|".join(w for w in sorted(_WEEKDAYS, key=len, reverse=True) if w.isascii())
_DATES = (
    ("iso", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
    ("zh", re.compile(r"(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]{1,2})月"
                      r"(\d{1,2}|[一二三四五六七八九十]{1,3})[日号]")),
    ("month_day", re.compile(rf"(?i)\b({_MONTH_WORDS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b"
                             r"(?:,?\s+(\d{4}))?")),
    ("day_month", re.compile(rf"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_WORDS})\b"
                             r"(?:,?\s+(\d{4}))?")),
    ("relative", re.compile(r"(?i)\bday after tomorrow\b|\btomorrow\b|\btoday\b|\btonight\b"
                            r"|\byesterday\b|大后天|后天|明天|明日|今天|今日|今晚|昨天")),
    ("in_days", re.compile(r"(?i)\bin\s+(\d{1,2})\s+days?\b|(\d{1,2}|[一二三四五六七八九十]{1,2})天(?:后|以后|之后)")),
    ("weekday_en", re.compile(rf"(?i)\b(next|this|on)?\s*({_DAY_WORDS})\b")),
    ("weekday_zh", re.compile(r"(下下|下个?|这个?|本)?(?:周|星期|礼拜)([一二三四五六日天])")),
)
_RELATIVE = {"today": 0, "tonight": 0, "tomorrow": 1, "day after tomorrow": 2, "yesterday": -1,
             "今天": 0, "今日": 0, "今晚": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3,
             "昨天": -1}


def _int(word: str) -> int:
    return int(word) if word.isdigit() else (cn_number(word) or 0)


def _dated(kind: str, found: re.Match, now: date) -> date | None:
    """The date one match says, relative to `now` where it has to be."""
    g = found.groups()
    try:
        if kind == "iso":
            return date(int(g[0]), int(g[1]), int(g[2]))
        if kind in ("zh", "month_day", "day_month"):
            if kind == "zh":
                year, month, day = g[0], _int(g[1]), _int(g[2])
            elif kind == "month_day":
                month, day, year = _MONTHS[g[0].lower()], int(g[1]), g[2]
            else:
                day, month, year = int(g[0]), _MONTHS[g[1].lower()], g[2]
            if year:
                return date(int(year), month, day)
            said = date(now.year, month, day)  # no year: the next such day from today on
            return said if said >= now else date(now.year + 1, month, day)
        if kind == "relative":
            return now + timedelta(days=_RELATIVE[found.group(0).lower()])
        if kind == "in_days":
            return now + timedelta(days=_int(g[0] or g[1]))
        if kind == "weekday_en":
            return _weekday(now, _WEEKDAYS[g[1].lower()], (g[0] or "").lower() == "next")
        if kind == "weekday_zh":
            weeks = {"下": 1, "下个": 1, "下下": 2}.get(g[0] or "", 0)
            monday = now - timedelta(days=now.weekday()) + timedelta(weeks=weeks)
            day = monday + timedelta(days=_WEEKDAYS[g[1]])
            return day if weeks or day >= now else day + timedelta(weeks=1)
    except (ValueError, KeyError):
        return None
    return None


def _weekday(now: date, weekday: int, next_week: bool) -> date:
    """"Friday": the next Friday from today on; "next Friday": the one in next week."""
    if next_week:
        return now - timedelta(days=now.weekday()) + timedelta(weeks=1, days=weekday)
    return now + timedelta(days=(weekday - now.weekday()) % 7)


def find_date(words: Words) -> str | None:
    """The first date the words say, as YYYY-MM-DD (claimed), or None."""
    now, hits = today(), []
    for kind, pattern in _DATES:
        for found in pattern.finditer(words.rest):
            said = _dated(kind, found, now)
            if said:
                hits.append((found.start(), found.end(), said))
    if not hits:
        return None
    start, end, said = min(hits)
    dated = [h for h in hits if h[0] > end and not re.search(r"\w{3,}", words.rest[end:h[0]].replace("of", ""))]
    if re.fullmatch(rf"(?i)(?:next |this |on )?(?:{_DAY_WORDS})|(?:下下|下个?|这个?|本)?(?:周|星期|礼拜)[一二三四五六日天]",
                    words.rest[start:end].strip()) and dated and dated[0][0] - end <= 3:
        end, said = dated[0][1], dated[0][2]  # "Friday May 8": one date
    words.claim(start, end)  # a second date ("from May 5 to May 8") stays for another one
    return said.isoformat()


# ------------------------------------------------------------------ times of day

_PARTS_OF_DAY = {"早上": 0, "上午": 0, "凌晨": 0, "中午": 12, "下午": 12, "晚上": 12, "傍晚": 12,
                 "今晚": 12}
_TIMES = (
    re.compile(r"(?i)(?:\bat\s+)?(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?\s*(am|pm|a\.m\.|p\.m\.)?"),
    re.compile(r"(?i)(?:\bat\s+)?(?<![\d:])(\d{1,2})()\s*(am|pm|a\.m\.|p\.m\.)"),
    re.compile(r"(?i)\bat\s+(\d{1,2})()(?:\s*o'clock)?()(?![\d:.\w])"),
    re.compile(r"(?i)\b(?:at\s+)?(noon|midday|midnight)()()\b"),
    re.compile(r"(早上|上午|凌晨|中午|下午|晚上|傍晚|今晚)?(\d{1,2}|[一二两三四五六七八九十]{1,3})[点點时]"
               r"(半|(\d{1,2})分?)?"),
)


_EVENING_EN = re.compile(r"(?i)\b(?:tonight|this evening|in the evening|evening|this afternoon|in the "
                         r"afternoon|afternoon|at night)\b")
_EVENING_ZH = re.compile(r"(?:今晚|晚上|下午|傍晚|明晚)\s*$")


def find_time(words: Words) -> str | None:
    """The first time of day the words say, as HH:MM in 24 hours (claimed), or None. An
    hour said without am/pm is in the afternoon or evening when the words say so, even if
    another parameter took those words ("tonight at 9" → 21:00, "今晚10点" → 22:00)."""
    hits = []
    for k, pattern in enumerate(_TIMES):
        for found in pattern.finditer(words.rest):
            hour, minute = _clock_of(k, found)
            if hour is not None and 0 <= hour < 24 and 0 <= minute < 60:
                if 1 <= hour < 12 and not _explicit(k, found) and \
                        (_EVENING_ZH.search(words.text[:found.start()]) if k == 4 else
                         _EVENING_EN.search(words.text)):
                    hour += 12
                hits.append((found.start(), found.end(), f"{hour:02d}:{minute:02d}"))
    if not hits:
        return None
    start, end, said = min(hits)
    words.claim(start, end)
    return said


def time_span(text: str) -> tuple[str, str] | None:
    """The two ends of a span of time of day the words give: "from 15:00 to 16:30", "9点到
    11点", "下午3点到5点" (the end in the afternoon too), as HH:MM each; None without one."""
    words = Words(text)
    first = find_time(words)
    if first is None:
        return None
    joined = re.search(r"(?i)^\x00*\s*(?:to|until|till|-|–|到|至)\s*", words.rest[words.taken[-1][1]:])
    if not joined:
        return None
    second = find_time(words)
    if second is None:
        return None
    start, end = (int(t[:2]) * 60 + int(t[3:]) for t in (first, second))
    if end <= start and end < 12 * 60 and end + 12 * 60 > start:
        end += 12 * 60
    return (first, f"{end // 60:02d}:{end % 60:02d}") if end > start else None


def _explicit(pattern: int, found: re.Match) -> bool:
    """Whether a time says which half of the day it is in: "9am", "下午3点", "noon", "21:00"."""
    g = found.groups()
    if pattern == 4:
        return bool(g[0])
    if pattern == 3:
        return True
    return bool(g[2]) or pattern == 0 and g[0].startswith("0")


def _clock_of(pattern: int, found: re.Match) -> tuple[int | None, int]:
    g = found.groups()
    if pattern == 3 and g[0] in ("noon", "midday", "midnight"):
        return (0 if g[0] == "midnight" else 12), 0
    if pattern == 4:
        hour = _int(g[1])
        minute = 30 if g[2] == "半" else int(g[3] or 0)
        if g[0] and _PARTS_OF_DAY[g[0]] and hour < 12:
            hour += 12
        return hour, minute
    hour, minute, half = int(g[0]), int(g[1] or 0), (g[2] or "").lower().replace(".", "")
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return hour, minute


# ------------------------------------------------------------------ e-mail addresses

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def find_emails(words: Words) -> list[str]:
    found = list(EMAIL.finditer(words.rest))
    for f in found:
        words.claim(f.start(), f.end())
    return [f.group(0) for f in found]


# ------------------------------------------------------------------ codes shaped like the example

_CODE_TOKEN = re.compile(r"(?<![A-Za-z0-9@.+])\+?[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9](?![A-Za-z0-9@])"
                         r"|(?<![A-Za-z0-9@.])[A-Z](?![A-Za-z0-9@])")
_EXAMPLES = re.compile(r"(?i)(?:e\.g\.|eg\.?|for example|such as|like|例如|比如)[:：,\s]*"
                       r"(\+?[A-Za-z0-9](?:[A-Za-z0-9-]|\.(?=\w))*"
                       r"(?:\s*(?:,|、|or)\s*\+?[A-Za-z0-9](?:[A-Za-z0-9-]|\.(?=\w))*)*)")
_NOT_CODES = {"I", "A", "OK", "AM", "PM", "UTC", "GMT", "AI", "TV", "US", "USA", "UK", "EU",
              "AQI", "SKU", "ID", "PDF"}


def shape(token: str) -> str:
    """The shape of a code: letters → A, digits → 9, runs squeezed: "CA981" → "A9",
    "AB-1234" → "A-9", "AAPL" → "A"."""
    marks = re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", token))
    return re.sub(r"(.)\1+", r"\1", marks)


def code_examples(description: str) -> list[str]:
    """The example codes a description gives ("e.g. AAPL, MSFT" → ["AAPL", "MSFT"]; "e.g.
    AAPL, or an A-share code such as 600519" → both)."""
    return [e for found in _EXAMPLES.finditer(description or "")
            for e in re.split(r"\s*(?:,|、|\bor\b)\s*", found.group(1)) if e]


def find_code(words: Words, description: str, name_words: set[str],
              others: set[str] = frozenset()) -> str | None:
    """A code the way the schema shows it: same shape as one of the description's examples
    (and a length near it), or "N digits" long; without either, an upper-case token with
    a digit or of 2 to 5 letters (a ticker). Of several, the one the words label for this
    parameter ("stop 10243" for stop_id; "bus 42" is a route's when another parameter is
    the stop), else the first. Claimed; None when no token fits."""
    examples = [e for e in code_examples(description) if re.search(r"[A-Z0-9]", e)]
    digits = re.search(r"(\d+)[- ]digits?|(\d+)\s*位", description or "")
    about = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]+", description or "")}
    mine = {w.rstrip("s") for w in name_words}
    best, best_score = None, None
    spaced = re.search(r"\b([A-Z]{2})\s+(\d{1,4})\b", words.rest)
    if spaced and any(shape(e.upper()) == "A9" and len(e) <= 8 for e in examples):
        words.claim(spaced.start(), spaced.end())  # "BA 287" for a flight shaped like "CA1831"
        return spaced.group(1) + spaced.group(2)
    for found in _CODE_TOKEN.finditer(words.rest):
        token = found.group(0)
        if token != token.upper() or token.upper() in _NOT_CODES or lookup(token):
            continue
        if not _fits(token, examples, digits, name_words):
            continue
        label = re.search(r"([A-Za-z]+)\W{0,2}$", words.rest[:found.start()])
        said = label.group(1).lower().rstrip("s") if label else ""
        score = 2 if said in mine else -2 if said in others - mine else 1 if said in about else 0
        if best_score is None or score > best_score:
            best, best_score = found, score
    if best is None or best_score < 0:
        return None
    words.claim(best.start(), best.end())
    return best.group(0).upper()


def _fits(token: str, examples: list[str], digits: re.Match | None, name_words: set[str]) -> bool:
    if digits:
        return token.isdigit() and len(token) == int(digits.group(1) or digits.group(2))
    if examples:
        return any(shape(token.upper().lstrip("+")) == shape(e.upper().lstrip("+"))
                   and (len(token) == len(e) if e.isdigit() else len(e) // 2 <= len(token) <= len(e) * 2)
                   or len(e) >= 8 and len(token) >= 8 and re.search(r"\d", token)
                   and re.search(r"[A-Za-z]", e) and re.search(r"\d", e) for e in examples)
    if token.isdigit():
        return len(token) >= 6 and bool(name_words & {"number", "barcode", "id", "tracking",
                                                      "account", "phone", "iban"})
    return bool(re.search(r"\d", token)) or 2 <= len(token) <= 5


# ------------------------------------------------------------------ money

# (code, words): ISO 4217 codes and what people call them, English and Chinese.
CURRENCIES = (
    ("USD", "us dollars|us dollar|u.s. dollars|american dollars|dollars|dollar|bucks|usd|us$|$|美元|美金|刀"),
    ("EUR", "euros|euro|eur|€|欧元"),
    ("CNY", "chinese yuan|renminbi|yuan|rmb|cny|人民币|元|块钱|块"),
    ("JPY", "japanese yen|yen|jpy|日元|日币"),
    ("GBP", "british pounds|pounds sterling|pound sterling|sterling|pounds|quid|gbp|£|英镑"),
    ("HKD", "hong kong dollars|hong kong dollar|hkd|港币|港元"),
    ("KRW", "korean won|won|krw|韩元"),
    ("AUD", "australian dollars|australian dollar|aud|澳元"),
    ("CAD", "canadian dollars|canadian dollar|cad|加元"),
    ("CHF", "swiss francs|swiss franc|chf|瑞士法郎"),
    ("SGD", "singapore dollars|singapore dollar|sgd|新加坡元|新币"),
    ("INR", "indian rupees|rupees|rupee|inr|卢比"),
    ("RUB", "rubles|ruble|roubles|rouble|rub|卢布"),
    ("THB", "thai baht|baht|thb|泰铢"),
    ("BTC", "bitcoin|btc|比特币"),
    ("ETH", "ethereum|ether|eth|以太坊|以太币"),
)
_CURRENCY_WORDS = sorted(((w, code) for code, said in CURRENCIES for w in said.split("|")),
                         key=lambda wc: -len(wc[0]))
CRYPTO = {"BTC", "ETH"}


def currencies_in(words: Words) -> list[tuple[int, int, str, bool]]:
    """Currencies the words name, in order: (start, end, code, attached to a number)."""
    found, lowered = [], words.rest.lower()
    for word, code in _CURRENCY_WORDS:
        pattern = re.escape(word) if re.search(CJK_RUN, word) else \
            (rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])" if word.isascii() else re.escape(word))
        for hit in re.finditer(pattern, lowered):
            if word in ("usd", "eur", "cny", "jpy", "gbp", "btc", "eth", "hkd", "krw", "aud",
                        "cad", "chf", "sgd", "inr", "rub", "thb") and \
                    words.rest[hit.start():hit.end()] != word.upper():
                continue  # a code counts in capitals only ("eth" in a word is not ETH)
            if any(s <= hit.start() < e for s, e, *_ in found):
                continue
            attached = bool(re.search(r"\d\s*$", lowered[:hit.start()])) or \
                word in ("$", "us$", "€", "£") and bool(re.match(r"\s*\d", lowered[hit.end():]))
            found.append((hit.start(), hit.end(), code, attached))
    return sorted(found)


def find_currency(words: Words, side: str, crypto: bool = False) -> str | None:
    """The currency for one side of a conversion: "from" is the one said with the amount
    ("100 dollars") or else the first named; "to" is the other one. Claimed."""
    said = [c for c in currencies_in(words) if (c[2] in CRYPTO) == crypto]
    if side == "to" and len(said) == 1 and said[0][3]:
        return None  # "100 dollars": only the amount's own currency is said
    if not said:
        return None
    chosen = said[0]
    if side == "from":
        chosen = next((c for c in said if c[3]), said[0])
    elif side == "to":
        chosen = next((c for c in said if not c[3]), said[-1]) if len(said) > 1 else said[0]
    words.claim(chosen[0], chosen[1])
    return chosen[2]


# ------------------------------------------------------------------ languages

# (English name, ISO 639-1 code, other words): what "French", "法语" and "fr" name.
LANGUAGES = (
    ("English", "en", "english|英文|英语"), ("Chinese", "zh", "chinese|mandarin|中文|汉语|普通话"),
    ("French", "fr", "french|法语|法文"), ("Japanese", "ja", "japanese|日语|日文"),
    ("German", "de", "german|德语|德文"), ("Spanish", "es", "spanish|西班牙语|西班牙文"),
    ("Korean", "ko", "korean|韩语|韩文|朝鲜语"), ("Russian", "ru", "russian|俄语|俄文"),
    ("Italian", "it", "italian|意大利语|意大利文"), ("Portuguese", "pt", "portuguese|葡萄牙语"),
    ("Arabic", "ar", "arabic|阿拉伯语|阿拉伯文"), ("Thai", "th", "thai|泰语|泰文"),
    ("Vietnamese", "vi", "vietnamese|越南语"), ("Dutch", "nl", "dutch|荷兰语"),
)
_LANGUAGE_WORDS = sorted(((w, name, code) for name, code, said in LANGUAGES
                          for w in said.split("|")), key=lambda w: -len(w[0]))
_TARGET_MARK = re.compile(r"(?i)(?:\b(?:into|to|in)\s+|成|为|用|译作)\s*$")
_SOURCE_MARK = re.compile(r"(?i)(?:\bfrom\s+|从)\s*$")


def languages_in(words: Words) -> list[tuple[int, int, str, str]]:
    """Languages named outside quotes, in order: (start, end, English name, code)."""
    found, lowered = [], words.rest.lower()
    for word, name, code in _LANGUAGE_WORDS:
        pattern = re.escape(word) if not word.isascii() else rf"\b{re.escape(word)}\b"
        for hit in re.finditer(pattern, lowered):
            if not any(s <= hit.start() < e for s, e, *_ in found):
                found.append((hit.start(), hit.end(), name, code))
    return sorted(found)


def find_language(words: Words, source: bool, as_code: bool) -> str | None:
    """The language to translate into (after "into", "to", "成", "用" ..., else the last
    one named) or, for a source parameter, the one after "from"/"从". Claimed."""
    said = languages_in(words)
    if source:
        said = [s for s in said if _SOURCE_MARK.search(words.rest[:s[0]])]
    else:
        marked = [s for s in said if _TARGET_MARK.search(words.rest[:s[0]])]
        said = marked or [s for s in said if not _SOURCE_MARK.search(words.rest[:s[0]])][-1:]
    if not said:
        return None
    start, end, name, code = said[0] if source else said[-1]
    words.claim(start, end)
    return code if as_code else name


def wants_code(schema: dict) -> bool:
    """Whether a language parameter takes codes ("ISO 639-1 code, e.g. en, fr") or names."""
    about = str(schema.get("description") or "")
    examples = code_examples(about)
    return bool(re.search(r"(?i)\biso\b|\bcode\b|代码|缩写", about)) or \
        any(re.fullmatch(r"[a-z]{2}(?:-[A-Za-z]{2})?", e) for e in examples)


# ------------------------------------------------------------------ countries

_COUNTRY_TABLE = (  # Chinese name, English name, ISO 3166 code: one row a country
    ("中国", "China", "CN"), ("美国", "United States", "US"), ("日本", "Japan", "JP"),
    ("法国", "France", "FR"), ("德国", "Germany", "DE"), ("英国", "United Kingdom", "GB"),
    ("意大利", "Italy", "IT"), ("西班牙", "Spain", "ES"), ("俄罗斯", "Russia", "RU"),
    ("韩国", "South Korea", "KR"), ("印度", "India", "IN"), ("巴西", "Brazil", "BR"),
    ("加拿大", "Canada", "CA"), ("澳大利亚", "Australia", "AU"), ("墨西哥", "Mexico", "MX"),
    ("埃及", "Egypt", "EG"), ("泰国", "Thailand", "TH"), ("越南", "Vietnam", "VN"),
    ("新加坡", "Singapore", "SG"), ("荷兰", "Netherlands", "NL"), ("瑞士", "Switzerland", "CH"),
    ("瑞典", "Sweden", "SE"), ("挪威", "Norway", "NO"), ("土耳其", "Turkey", "TR"),
    ("阿根廷", "Argentina", "AR"), ("南非", "South Africa", "ZA"), ("新西兰", "New Zealand", "NZ"),
    ("印度尼西亚", "Indonesia", "ID"), ("葡萄牙", "Portugal", "PT"), ("希腊", "Greece", "GR"),
)
COUNTRIES = {zh: en for zh, en, _ in _COUNTRY_TABLE}
ISO_COUNTRIES = {en: code for _, en, code in _COUNTRY_TABLE}
_COUNTRY_EN = {v.lower(): v for v in COUNTRIES.values()} | {
    "usa": "United States", "us": "United States", "america": "United States",
    "uk": "United Kingdom", "britain": "United Kingdom", "england": "United Kingdom"}


DEMONYMS = {"chinese": "China", "american": "United States", "japanese": "Japan",
            "french": "France", "german": "Germany", "british": "United Kingdom",
            "italian": "Italy", "spanish": "Spain", "russian": "Russia", "korean": "South Korea",
            "indian": "India", "brazilian": "Brazil", "canadian": "Canada",
            "australian": "Australia", "mexican": "Mexico", "thai": "Thailand"}
_TO_COUNTRY = re.compile(r"(?i)(?:\b(?:to|visit|visiting|into|entering|for)\s+(?:the\s+)?|去|到|前往|飞往|入境)\s*$")
_FROM_COUNTRY = re.compile(r"(?i)^\s*(?:passport|citizen|national)|^\s*(?:的)?(?:护照|公民|国籍)")


def find_country(words: Words, role: str = "") -> str | None:
    """A country named in English or Chinese ("Chinese passport": China), as its English
    name. With a role, only the country the words give that role: "to" after "to",
    "visit", "去"; "from" before "passport", "护照". Claimed."""
    hits = _country_hits(words)
    if role == "to":
        hits = [h for h in hits if _TO_COUNTRY.search(words.rest[:h[0]])]
    elif role == "from":
        hits = [h for h in hits if _FROM_COUNTRY.search(words.rest[h[1]:])]
    if not hits:
        return None
    start, end, name = min(hits)
    words.claim(start, end)
    return name


def _country_hits(words: Words) -> list[tuple[int, int, str]]:
    hits = []
    for said, name in DEMONYMS.items():
        for hit in re.finditer(rf"(?i)\b{said}\b", words.rest):
            hits.append((hit.start(), hit.end(), name))
    for zh, name in COUNTRIES.items():
        at = words.rest.find(zh)
        if at >= 0:
            hits.append((at, at + len(zh), name))
    for said, name in _COUNTRY_EN.items():
        for hit in re.finditer(rf"(?i)\b{re.escape(said)}\b", words.rest):
            if said not in ("us",) or words.rest[hit.start():hit.end()] == "US":
                hits.append((hit.start(), hit.end(), name))
    return hits


# ------------------------------------------------------------------ routes: from X to Y

_END_EN = (r"(?=\s*\x00|\s+(?i:on|at|by|for|in|via|tomorrow|today|tonight|next|this|and|with|under|from|to|"
           r"please|leaving|departing|around|if|when|how)\b|\s*[,.?!;]|\s*$|\s+\d)")
_NAME_WORD = r"(?!(?:From|To|And|On|At|In|For|By)\b)[A-Z][\w'.-]*"
# A place: capitalised words ("Madison Square Garden", "the Hilton"), maybe a street number
# before them ("55 Water St") or a number after them ("Heathrow Terminal 5").
_PLACE_EN = (rf"((?:the\s+)?(?:\d+[A-Z]?\s+)?{_NAME_WORD}(?:\s+(?:{_NAME_WORD}|de|of|la|del))*"
             r"(?:\s+\d{1,3}[A-Z]?(?![\d:.])(?!\s*(?i:am|pm|a\.m|p\.m|%|min|minutes|hours?|km|miles?)\b))?)")
# Lower-case ends only where "from ... to ..." says they are places: "from home to work",
# "to the convention center".
_HOME_WORDS = r"home|work|office|school|campus|downtown|uptown|the\s+[a-z]+(?:\s+[a-z]+)?"
_ANY_PLACE_EN = rf"({_PLACE_EN[1:-1]}|(?:{_HOME_WORDS}))"
_ROUTE_EN = re.compile(rf"\b(?i:from)\s+{_ANY_PLACE_EN}\s+(?i:to|for)\s+{_ANY_PLACE_EN}{_END_EN}")
_BARE_ROUTE_EN = re.compile(rf"^\s*{_PLACE_EN}\s+to\s+{_PLACE_EN}{_END_EN}")
_TO_EN = re.compile(rf"(?<!\bfrom)\b(?i:to|towards)\s+{_PLACE_EN}{_END_EN}")
_FROM_EN = re.compile(rf"\b(?i:from)\s+{_PLACE_EN}{_END_EN}")
_STOP_ZH = r"(?=的|怎么|怎样|有|吗|呢|，|,|。|？|\?|！|!|\s|出发|坐|乘|开车|步行|走路|骑|打车|要|多久|多长|需要|大概|大约|$)"
_MODE_ZH = r"(?:开车|骑车|骑行|打车|坐车|坐地铁|乘地铁|坐公交|乘公交|坐高铁|坐火车|坐飞机|步行|走路|出发)$"
_ROUTE_ZH = re.compile(rf"从\s*({CJK_RUN}+?|[A-Za-z][\w ]*?)\s*(?:到|去|飞往|飞到|飞|至|往)\s*"
                       rf"({CJK_RUN}+?|[A-Za-z][\w ]*?){_STOP_ZH}")
_TO_ZH = re.compile(rf"(?:去|到|飞往|前往)\s*({CJK_RUN}{{2,}}?|[A-Za-z][\w ]*?){_STOP_ZH}")
_FROM_ZH = re.compile(rf"从\s*({CJK_RUN}{{2,}}?|[A-Za-z][\w ]*?)\s*出发")
_BARE_ROUTE_ZH = re.compile(rf"({CJK_RUN}{{2,4}}?)\s*(?:飞|到)\s*({CJK_RUN}{{2,4}}?){_STOP_ZH}")


def _place_text(said: str) -> str:
    """A route end as sent: a known city by its name in the language typed (as
    understand.place_value does), else the words as typed."""
    place = lookup(said.strip())
    if place is None:
        return said.strip()
    return place.zh if re.search(CJK_RUN, said) else place.name


def _trim_zh(said: str) -> str:
    """A Chinese route end without leading filler ("去机场" is 机场; "的航班" is cut)."""
    said = re.sub(r"^(?:一下|查查|查一下|看看|帮我查|帮我|我要|我想)", "", said)
    return said


def find_route(words: Words) -> tuple[str | None, str | None]:
    """(origin, destination) from "from X to Y", "to Y", "从X到Y", "从X飞Y", "去Y".
    Claimed; either may be None."""
    rest = words.rest
    for pattern in (_ROUTE_EN, _ROUTE_ZH):
        found = pattern.search(rest)
        if found:
            a, b = found.group(1), found.group(2)
            if pattern is _ROUTE_ZH:
                a, b = re.sub(_MODE_ZH, "", _trim_zh(a)), _trim_zh(b)
                mode = re.search(_MODE_ZH, found.group(1))
                if mode:  # "从西湖骑车到灵隐寺": 骑车 is the way, left for a mode parameter
                    words.claim(found.start(), found.start(1) + mode.start())
                    words.claim(found.start(1) + mode.end(), found.end())
                    return _place_text(a), _place_text(b)
            words.claim(found.start(), found.end())
            return _place_text(a), _place_text(b)
    origin = destination = None
    for pattern in (_FROM_EN, _FROM_ZH):
        found = pattern.search(rest)
        if found:
            origin = _place_text(found.group(1))
            words.claim(found.start(), found.end())
    for pattern in (_TO_EN, _TO_ZH):
        found = pattern.search(words.rest)
        if found and len(found.group(1).strip()) >= 2:
            destination = _place_text(_trim_zh(found.group(1)) if pattern is _TO_ZH
                                      else found.group(1))
            words.claim(found.start(), found.end())
            break
    if origin is None and destination is None:
        found = _BARE_ROUTE_EN.search(words.rest)  # "Brooklyn to JFK by subway"
        if found:
            words.claim(found.start(), found.end())
            return _place_text(found.group(1)), _place_text(found.group(2))
        places = find_places(words.rest)
        found = _BARE_ROUTE_ZH.search(words.rest)
        if found and len(places) >= 2:
            words.claim(found.start(), found.end())
            return _place_text(found.group(1)), _place_text(found.group(2))
    return origin, destination


# ------------------------------------------------------------------ unknown places in English

_IN_PLACES = re.compile(r"\b(?:in|at|for|of|near|around)\s+(?:the\s+city\s+of\s+)?"
                        r"([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*"
                        r"(?:\s*(?:,\s*|\s+and\s+|\s*&\s*)[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)*)")


def places_said(text: str, avoid: set[str]) -> list[tuple[int, str]]:
    """Capitalised names after "in", "for", "at", "of" ... the gazetteer may not know,
    with the lists they start: "weather in Oslo and Rome" → Oslo, Rome. Words in `avoid`
    (units, enum values, languages) are not places."""
    found = []
    for hit in _IN_PLACES.finditer(text or ""):
        at = hit.start(1)
        for part in re.split(r"\s*,\s*|\s+and\s+|\s*&\s*", hit.group(1)):
            if part and part.lower() not in avoid and not _is_code(part):
                found.append((at + hit.group(1).find(part), part))
    return found


def _is_code(word: str) -> bool:
    return word.isupper() and len(word) > 1 or bool(re.search(r"\d", word))


# ------------------------------------------------------------------ numbers with units

# What a unit is called, for matching a number to the parameter it belongs to: the keys
# are stems of parameter-name words, the values what people write after the number.
UNITS = {
    "minute": r"minutes?|mins?|分钟|分", "hour": r"hours?|hrs?|小时|钟头",
    "day": r"days?|天|日", "night": r"nights?|晚|夜", "week": r"weeks?|周|星期",
    "guest": r"guests?|people|persons?|adults?|人|位|个人",
    "passenger": r"passengers?|people|persons?|adults?|tickets?|人|位|个人|张",
    "person": r"people|persons?|人|位", "ticket": r"tickets?|seats?|张",
    "room": r"rooms?|间", "gram": r"grams?|g|克", "kilogram": r"kilograms?|kg|公斤|千克",
    "percent": r"%|percent|per cent|个百分点", "degree": r"degrees?|°c?|℃|度",
    "temperature": r"degrees?|°c?|℃|°f|℉|度", "serving": r"servings?|portions?|people|persons?|人份|份|个人|人",
    "year": r"years?|年", "month": r"months?|个月", "mile": r"miles?|英里", "km": r"km|公里|千米",
    "page": r"pages?|页", "kg": r"kg|kilograms?|kilos?|公斤|千克", "cm": r"cm|centimet(?:er|re)s?|厘米|公分",
    "m": r"m|meters?|metres?|米", "%": r"%|percent|per cent", "usd": r"dollars?|\$|美元", "item": r"items?|个|件", "result": r"results?|条|个",
    "limit": r"results?|items?|articles?|条|个|篇",
    "ml": r"ml|milliliters?|millilitres?|毫升", "l": r"l|liters?|litres?|升",
    "sentence": r"sentences?|句话|句", "character": r"characters?|chars?|位|个字符|字符",
    "bag": r"(?:checked\s+)?bags?|suitcases?|件行李|件", "package": r"packages?|parcels?|boxes|箱子|个箱子|个包裹|包裹|箱|件",
    "quantity": r"shares?|股|tablets?|pills?|capsules?|片|粒|cups?|杯", "share": r"shares?|股",
    "seat": r"seats?|位|个座位", "people": r"people|persons?|ways|人|位|个人",
}
_MONEY_WORDS = {"price", "amount", "bill", "budget", "cost", "total", "fare", "salary", "principal",
                "loan", "fee", "deposit"}
_MAX_CUES = r"under|below|less than|at most|up to|no more than|max(?:imum)?|cheaper than|以内|以下|之内|不超过|最多|低于"
_MIN_CUES = r"over|above|more than|at least|min(?:imum)?|以上|至少|超过|高于"
_EN_NUMBERS = {w: k + 2 for k, w in enumerate(
    "two three four five six seven eight nine ten eleven twelve".split())}  # not "one": "which one"
NUMBER = re.compile(rf"(?<![A-Za-z0-9_.\-:/@])(-?\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(?![\d:/]|\.\d)"
                    rf"|({CN_NUMBER})"
                    rf"|(?i:\b({'|'.join(_EN_NUMBERS)})\b)")


@dataclass
class Quantity:
    start: int
    end: int
    value: float
    unit: str  # the word after it ("nights", "晚", "%"), "" if none
    scale: float = 1.0  # its multiplier ("80万": 10000)


def quantities(words: Words) -> list[Quantity]:
    """The numbers still free in the words, each with the unit word after it. A number
    inside a code ("CA981"), a date or a time is not one (they are read first, or are
    skipped here: "2026-03-15" gives no 2026)."""
    found = []
    rest = _masked(words.rest)
    for hit in NUMBER.finditer(rest):
        if hit.group(1):
            value = float(hit.group(1).replace(",", ""))
        elif hit.group(3):
            value = float(_EN_NUMBERS[hit.group(3).lower()])
        else:
            value = cn_number(hit.group(2))
            after = words.text[hit.end():hit.end() + 3]  # the measure may be taken ("一百美元")
            taken = rest[hit.end():hit.end() + 1] == "\x00"  # "一茶匙": the measure an enum took
            if value is None or not (re.match(CN_MEASURES, after) or taken) or re.match(r"[点月号]", after) \
                    or hit.group(2) == "一" and re.match(CN_CLASSIFIERS, after):
                continue  # "张三" is a name, "三点" a time, "一张" is "a", not a number
        if hit.group(1) and _in_title(rest, words.text, hit.start(), hit.end()):
            continue  # "Inside Out 3", "Windows 11": part of a name
        end, scale = _multiplier(rest, hit.end())
        unit = re.match(r"\s*-?\s*(%|°[CF]?|℃|℉|[A-Za-z]+|[\u4e00-\u9fff]{1,3})", rest[end:])
        found.append(Quantity(hit.start(), end, value * scale, unit.group(1) if unit else "", scale))
    return found


_MULTIPLIERS = re.compile(r"(?i)(?:(?<=\d)[kK](?![A-Za-z])|\s*(?:thousand|million|billion)\b|\s*(?:百万|万|亿|千(?![克米瓦卡])))")
_SCALE = {"k": 1e3, "thousand": 1e3, "million": 1e6, "billion": 1e9, "万": 1e4, "百万": 1e6, "亿": 1e8,
          "千": 1e3}


def _multiplier(rest: str, end: int) -> tuple[int, float]:
    """"250k", "80 万", "1.5 million": where the number ends with its multiplier, and it."""
    m = _MULTIPLIERS.match(rest, end)
    return (m.end(), _SCALE[m.group(0).strip().lower()]) if m else (end, 1.0)


def _in_title(rest: str, text: str, start: int, end: int) -> bool:
    """A bare number right after a capitalised word that does not start the text: part of
    a name ("Inside Out 3", "Toy Story 4"), unless a unit follows it ("Corp 500 euros")."""
    before = re.search(r"(\S+)\s+$", rest[:start])
    if not before or not re.fullmatch(r"[A-Z][a-z]+", before.group(1)) or \
            not rest[:before.start(1)].strip():
        return False
    return bool(re.match(r"\s+(?i:on|at|in|for|tomorrow|today|tonight|next|this)\b|\s*[,.?!;]|\s*$", text[end:]))


_UNIT_SUFFIX = re.compile(r"(?i)\d+(?:\.\d+)?(?:k|m|km|cm|mm|kg|g|mg|ml|l|lb|lbs|oz|h|hrs?|mins?|s|gb|mb|tb)")


def _masked(text: str) -> str:
    """Dates, times and codes blanked, so their digits are not read as numbers; a number
    written with its unit ("750ml", "250k", "160cm") is no code."""
    for pattern in (_DATES[0][1], _DATES[1][1], _TIMES[0], _TIMES[4]):
        text = pattern.sub(lambda m: "\x00" * len(m.group(0)), text)
    return re.sub(r"[A-Za-z]+\d[A-Za-z0-9_-]*|\d+[A-Za-z][A-Za-z0-9_-]*", lambda m: m.group(0) if _UNIT_SUFFIX.fullmatch(
        m.group(0)) else "\x00" * len(m.group(0)), text)


_LINK_WORDS = {"at", "for", "and", "on", "in", "to", "of", "the", "a", "with", "or", "by", "from",
               "please", "tonight", "today", "tomorrow"}  # after a number, not its unit


def _said_with(after: str, unit: str) -> re.Match | None:
    """The unit right after a number, or one English word later ("3 news articles"), or
    after a classifier ("6个人")."""
    return re.match(rf"(?i)\s*(?:[A-Za-z]+\s+|个|名)?(?:{unit})(?![A-Za-z])", after)


_GENERIC_NAME_WORDS = {"count", "number", "num", "total", "value", "max", "min", "maximum", "minimum"}


def unit_words(name_words: list[str], description: str = "") -> str | None:
    """The unit pattern for a parameter from its name's last word ("max_minutes" →
    minutes; "limit_price" has none), or an earlier one after a generic last word
    ("guests_count"), else from its description ("Weight in kg", "Annual rate in percent")."""
    said = re.search(r"(?i)\b(?:in|as a|as)\s+([a-z%]+)", description or "")
    heads = list(reversed(name_words))
    while len(heads) > 1 and heads[0] not in _GENERIC_NAME_WORDS and not any(
            heads[0] == k or heads[0].rstrip("s") == k or heads[0] == k + "s" for k in UNITS):
        heads = heads[:1]
    for word in [*heads, *([said.group(1).lower()] if said else [])]:
        for key, pattern in UNITS.items():
            if word == key or word.rstrip("s") == key or word == key + "s":
                return pattern
    return None


def find_number(words: Words, name_words: list[str], about: str, integer: bool,
                others: list[str | None], alone: bool) -> float | int | None:
    """The number for one parameter: the one written with this parameter's unit ("3
    nights", "两晚", "20%"); for a price-like one, the one after "under"/"以内" (a maximum)
    or said with money; else, if `alone` (the last number parameter to fill), the one
    number left that no other parameter's unit claims. Claimed."""
    said = quantities(words)
    mine = unit_words(name_words, about)
    taken_by_others = [re.compile(rf"(?i)^(?:{p})$") for p in others if p]
    chosen = None
    if mine:
        chosen = next((q for q in said if _said_with(words.rest[q.end:], mine)), None)
    if chosen is None and mine:  # "2 hours" for minutes, "1.5升" for ml, "1.65 m" for cm
        scaled = scaled_number(words, mine, integer)
        if scaled is not None:
            return scaled
        one = re.search(rf"(?<![\d一二三四五六七八九十两])一\s*(?:{mine})", words.rest)
        if one:  # "托运一件行李": one, not "a"
            words.claim(one.start(), one.end())
            return 1
    if chosen is None and set(name_words) & _MONEY_WORDS:  # "贷款60万", "250k": an amount of money
        chosen = next((q for q in said if q.scale >= 1000 or re.match(
            rf"(?i)\s*(?:{_MONEY_UNITS})", words.rest[q.end:]) or re.search(r"[$€£]\s*$", words.rest[:q.start])),
            None)
    if chosen is None and set(name_words) & {"quantity", "shares", "count", "number", "units"}:
        chosen = next((q for q in said if re.match(r"\s*\x00", words.rest[q.end:])
                       and not q.unit), None)  # "sell 25 TSLA": a count of what a code names
    if chosen is None and {"max", "maximum"} & set(name_words):
        chosen = next((q for q in said if re.search(rf"(?i)(?:{_MAX_CUES})\s*$",
                                                    words.rest[:q.start])
                       or re.match(rf"\s*\S{{0,3}}\s*(?:{_MAX_CUES})", words.rest[q.end:])), None)
    if chosen is None and {"min", "minimum"} & set(name_words):
        chosen = next((q for q in said if re.search(rf"(?i)(?:{_MIN_CUES})\s*(?:[A-Za-z]+\s+)?$",
                                                    words.rest[:q.start])), None)
    if chosen is None:  # labelled: "magnitude 5", "stop 3" for min_magnitude, stop
        labels = {w.rstrip("s") for w in name_words} - {"min", "max", "minimum", "maximum", "number"}
        chosen = next((q for q in said if (lambda m: m and m.group(1).lower().rstrip("s") in labels)(
            re.search(r"([A-Za-z]+)\s*$", words.rest[:q.start]))), None)
    if chosen is None and alone:
        free = [q for q in said if not any(p.match(q.unit) for p in taken_by_others)]
        if set(name_words) & {"max", "min", "maximum", "minimum"}:
            free = []
        elif mine:
            free = [q for q in free if not q.unit or q.unit.lower() in _LINK_WORDS
                    or not re.match(r"[A-Za-z%°\u4e00-\u9fff]", q.unit)]
        chosen = free[0] if len(free) == 1 else None
    if chosen is None:
        return None
    words.claim(*_span_of(words.rest, chosen, mine))
    value = chosen.value
    return int(value) if integer or float(value).is_integer() else value


# Other units a parameter's own is a multiple of: (its unit, other unit, factor).
_SCALED = (("minute", r"hours?|hrs?|h|个?小时|个?钟头", 60), ("hour", r"minutes?|mins?|分钟", 1 / 60),
           ("ml", r"l|liters?|litres?|升", 1000), ("cm", r"m|meters?|metres?|米", 100),
           ("km", r"m|meters?|metres?|米", 0.001), ("gram", r"kg|kilograms?|kilos?|公斤|千克", 1000),
           ("kg", r"g|grams?|克", 0.001))
_HALF = re.compile(r"(?i)\b(?:half an hour|half hour)\b|半(?:个)?小时")
_AN_UNIT = re.compile(r"(?i)(?:\b(?:a|an|one)\s+|(?<![\d.])一\s*(?:个)?)")


def scaled_number(words: Words, mine: str, integer: bool) -> float | int | None:
    """A number said in another unit than the parameter's, converted: "2 hours" is 120 for
    minutes, "两个半小时" 150, "half an hour" 30, "1.5升" 1500 for ml, "1米8" 180 for cm,
    "500 m" 0.5 for km, "a liter" 1000. Claimed; None when none is said."""
    key = next((k for k, p in UNITS.items() if p == mine), None)
    for unit_key, other, factor in _SCALED:
        if unit_key != key:
            continue
        if key == "cm":  # "1米8", "1米75": metres and centimetres the Chinese way
            m = re.search(r"(\d)\s*米\s*(\d{1,2})(?![\d.])", words.rest)
            if m:
                words.claim(m.start(), m.end())
                return _whole(int(m.group(1)) * 100 + int(m.group(2)) * (10 if len(m.group(2)) == 1 else 1), integer)
        if key == "minute":
            half = _HALF.search(words.rest)
            if half and not re.search(r"\d\s*(?:个)?$|[一二两三四五六七八九十]\s*(?:个)?$", words.rest[:half.start()]):
                words.claim(half.start(), half.end())
                return _whole(30, integer)
        for q in quantities(words):
            unit = re.match(rf"(?i)\s*-?\s*(?:个)?(半)?\s*(?:{other})(?![A-Za-z])", words.rest[q.end:])
            if unit:
                value = q.value + (0.5 if unit.group(1) else 0)
                extra = re.match(r"(?i)\s*(?:and a half|半)", words.rest[q.end + unit.end():])
                value += 0.5 if extra else 0
                words.claim(q.start, q.end + unit.end() + (extra.end() if extra else 0))
                return _whole(value * factor, integer)
        one = re.search(rf"{_AN_UNIT.pattern}(?:{other})(?![A-Za-z])", words.rest)
        if one:
            words.claim(one.start(), one.end())
            return _whole(factor, integer)
    return None


def _whole(value: float, integer: bool) -> float | int:
    value = round(value, 6)
    return int(value) if integer or float(value).is_integer() else value


_MONEY_UNITS = r"dollars?|bucks|euros?|yuan|rmb|元|块钱|块|美元|欧元|英镑|日元"


def _span_of(rest: str, chosen: Quantity, mine: str | None) -> tuple[int, int]:
    """What a number takes with it: its unit, a money word, and "under"/"以内" around it."""
    start, end = chosen.start, chosen.end
    unit = _said_with(rest[end:], mine) if mine else None
    end += unit.end() if unit else 0
    money = re.match(rf"(?i)\s*(?:{_MONEY_UNITS})", rest[end:])
    end += money.end() if money else 0
    after = re.match(rf"(?i)\s*(?:{_MAX_CUES}|{_MIN_CUES})", rest[end:])
    end += after.end() if after else 0
    before = re.search(rf"(?i)(?:{_MAX_CUES}|{_MIN_CUES})\s*$", rest[:start])
    return (before.start() if before else start), end


# ------------------------------------------------------------------ enum values by their synonyms

# Other words for common enum values: units, cuisines, ways to travel, news sections,
# sports, priorities, rooms, leagues. Keys are enum values (lower-case, "_" as " ").
SYNONYMS = {
    "km": "kilometers,kilometres,kilometer,kilometre,公里,千米", "mile": "miles,英里",
    "meter": "meters,metres,metre,m,米", "foot": "feet,ft,英尺", "inch": "inches,英寸",
    "kg": "kilograms,kilogram,kilos,kilo,公斤,千克", "pound": "pounds,lbs,lb,磅",
    "gram": "grams,g,克", "ounce": "ounces,oz,盎司", "liter": "liters,litres,litre,l,升",
    "gallon": "gallons,加仑", "celsius": "摄氏,°c,℃,centigrade", "fahrenheit": "华氏,°f,℉",
    "kelvin": "开尔文,开氏", "chinese": "中餐,中国菜,川菜", "italian": "意大利,意餐,意式",
    "japanese": "日本料理,日料,日式,日本菜", "mexican": "墨西哥", "indian": "印度",
    "french": "法国菜,法餐,法式", "korean": "韩国料理,韩餐", "thai": "泰国菜,泰餐",
    "cheap": "inexpensive,budget,affordable,便宜,实惠", "moderate": "mid-range,中等",
    "expensive": "fancy,upscale,pricey,高档,贵",
    "driving": "drive,by car,by taxi,开车,驾车,自驾,打车", "walking": "walk,on foot,步行,走路,走着",
    "transit": "public transport,by bus,by subway,by metro,by train,subway,train,公交,地铁,坐地铁,公共交通",
    "cycling": "cycle,by bike,bicycle,biking,骑车,骑行,自行车",
    "business": "finance,financial,economy,财经,商业,经济", "sports": "sport,体育",
    "technology": "tech,科技,技术", "health": "健康,医疗", "entertainment": "娱乐",
    "science": "科学", "politics": "政治",
    "running": "run,ran,jog,jogging,跑步", "swimming": "swim,swam,游泳",
    "yoga": "瑜伽", "hiking": "hike,徒步,爬山",
    "low": "低,低优先级,优先级低,不急", "medium": "normal,中,中优先级,普通,中杯",
    "high": "urgent,important,高,高优先级,优先级高,紧急,重要",
    "back yard": "backyard,后院,后花园", "front yard": "frontyard,前院", "balcony": "阳台",
    "garden": "花园", "garage": "车库",
    "living room": "lounge,客厅", "bedroom": "卧室", "kitchen": "厨房", "office": "study,书房,办公室",
    "bathroom": "卫生间,浴室",
    "premier league": "epl,英超", "la liga": "laliga,西甲", "serie a": "意甲",
    "bundesliga": "德甲", "ligue 1": "ligue one,法甲",
    # kitchen measures
    "cup": "cups,杯", "tablespoon": "tablespoons,tbsp,tbs,汤匙,大勺", "teaspoon": "teaspoons,tsp,茶匙,小勺",
    "ml": "milliliters,millilitres,milliliter,millilitre,毫升",
    "shopping": "购物", "billing": "bill,账单,计费", "technical": "tech,技术", "account": "账户,账号,帐号",
    "urgent": "asap,紧急,加急", "normal": "普通,一般",
    # trading and alerts
    "buy": "purchase,买入,购买,买", "sell": "卖出,卖掉,卖",
    "above": "over,rises above,goes above,climbs above,rises past,exceeds,higher than,以上,涨到,涨破,高于,超过",
    "below": "under,drops below,falls below,falls,drops,dips below,lower than,以下,跌破,跌到,低于",
    "limit": "限价,limit order", "market": "市价,market order",
    # home
    "on": "turn on,switch on,打开,开启", "off": "turn off,switch off,关掉,关闭,关上,关了",
    "lock": "锁上,锁好,上锁,锁门,锁", "unlock": "解锁,开锁,打开",
    "front": "front door,前门,正门,大门", "back": "back door,后门", "side gate": "side door,侧门,边门",
    "quiet": "silent,静音,安静", "turbo": "max,strong,强力,最强", "standard": "标准",
    # cafes
    "small": "小杯", "large": "大杯", "oat": "燕麦", "soy": "豆奶,豆浆", "whole": "全脂",
    "skim": "skimmed,脱脂",
    # travel and rides
    "comfort": "舒适,舒适型", "xl": "6座,六座,商务车", "economy": "经济,经济型",
    "window": "靠窗,窗边", "aisle": "过道,靠过道", "middle": "中间",
    "sf express": "顺丰,sf",
    # gyms
    "spin": "spinning,indoor cycling,动感单车", "pilates": "普拉提", "boxing": "拳击",
    "hiit": "高强度间歇",
    # deployments
    "production": "prod,生产,生产环境,线上,正式环境", "staging": "stage,预发,预发布,预发环境",
    # files
    "image": "images,photo,photos,picture,pictures,图片,照片,jpg,png",
    "spreadsheet": "spreadsheets,excel,xlsx,表格", "document": "documents,doc,docx,word,文档",
    "code": "source code,py,python,js,javascript,代码,源码,脚本", "pdf": "pdfs",
    # places nearby
    "gas station": "petrol station,加油站", "pharmacy": "drugstore,chemist,药店,药房",
    "atm": "cash machine,取款机", "hospital": "医院", "cafe": "café,coffee shop,咖啡馆,咖啡店",
    "supermarket": "grocery store,超市", "parking": "car park,停车场,停车位",
}


# Words that name a thing of an enum's kind ("lunch" is food, "打车" transport): they pick
# the value, but stay free for a parameter that describes the thing ("Log $18 for lunch":
# category food, description lunch).
TOPICS = {
    "food": "lunch,dinner,breakfast,meal,meals,groceries,snack,午饭,午餐,晚饭,晚餐,早饭,早餐,吃饭,外卖",
    "transport": "taxi,cab,uber,bus,train,subway,metro,fuel,打车,出租车,地铁,公交,车费,加油",
    "lodging": "hotel,hostel,airbnb,accommodation,motel,住酒店,酒店,住宿,民宿,宾馆",
    "shopping": "clothes,shoes,买衣服,衣服,鞋",
    "billing": "charge,charged,invoice,refund,payment,扣款,发票,退款",
    "technical": "bug,crash,crashes,error,故障,闪退,报错",
    "account": "login,password,profile,登录",
    "entertainment": "movie,movies,cinema,concert,theatre,theater,看电影,电影,演唱会",
    "health": "doctor,medicine,pharmacy,看病,医院,药",
}


def closeness(value: Any, word: str) -> int:
    """How far down its value's list of other words `word` is (0: the value itself): of two
    values a word names ("紧急": high, urgent), the one it is listed first for wins."""
    said = str(value).lower().replace("_", " ")
    listed = (SYNONYMS.get(said, "") + "," + TOPICS.get(said, "")).split(",")
    return listed.index(word) + 1 if word in listed else 0


def enum_forms(value: Any) -> list[str]:
    """Every way `value` may be written: itself, with spaces for "_", plural, its synonyms."""
    return list(_enum_forms(str(value).lower()))


@lru_cache(maxsize=4096)
def _enum_forms(said: str) -> tuple[str, ...]:
    spaced = said.replace("_", " ").replace("-", " ")
    forms = {said, spaced, spaced + "s", spaced + "es"}
    if spaced.endswith("y"):
        forms.add(spaced[:-1] + "ies")
    forms |= set(SYNONYMS.get(spaced, SYNONYMS.get(said, "")).split(","))
    forms |= set(TOPICS.get(spaced, "").split(","))
    for name, code, words_ in LANGUAGES:  # a language enum: "en" is English, 英文, 英语
        if said in (code, name.lower()):
            forms |= set(words_.split("|")) | {name.lower()}
    return tuple(sorted((f for f in forms if f), key=len, reverse=True))
