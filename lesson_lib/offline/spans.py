"""Values the words mark out for a parameter: spans found by their shape or by a cue word.

slots.py finds a value by its type (a date, a time, a number with its unit, a currency).
This module finds the values a request *marks out*, with small extractors that each
return Spans (where the value is, the value, and whether it is sure: a shape is; a value
a common cue introduces, "at", "for", "with", "在", only when it has the right look, and
an unsure span is never used):

- by shape, wherever they are: a URL, a repository "owner/name", a file name or path
  ("report.docx", "~/照片/IMG_001.png"), a phone number, a version ("v2.4.1"), a chat
  channel ("#ops"), a street address ("12 Elm Street", "文三路90号"), a room ("kitchen",
  "客厅"), a device ("living room TV", "卧室音箱");
- by a cue, the words that introduce a value for a role, in English and Chinese: "labelled
  gym" (label), "subject: Lunch" / "主题是周报" (subject), "called Road Trip" / "叫晨会"
  (name, title, label), "from Jake" / "向小王" (who pays), "姓王" (last name), "near Union
  Square" / "春熙路附近" (where), "备注聚餐" (reason, note), "options: A, B" / "选项：A、B";
  the value is read after the cue (or before it, for a Chinese cue that follows its value:
  "bug 标签", "老婆的电话"), by what the parameter takes: a phrase, a quoted text, a
  person's name, a branch name, a list.

fill() matches them to a tool's parameters: a parameter wants a shape (from its type,
name and description, want_of) and plays roles (the words of its name, then of its
description); a cue fits a parameter when one of its roles is one of those words, the
name's words first. Each span is used once (claimed in the Words, so no other parameter
reads it again), and a parameter is left empty rather than filled unsurely: when one that
takes a marked value (a person, a repository, a place to search around ...) finds none,
the caller asks for it instead of guessing it from the rest of the sentence (cue_only).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lesson_lib.offline import slots
from lesson_lib.places import find_places, place_spans

CJK = r"\u4e00-\u9fff"


@dataclass(frozen=True)
class Span:
    """A value found in the words: where it is (what to claim), the value, and whether the
    extractor is sure of it (a cue and a value of the right shape) or only guesses."""
    start: int
    end: int
    value: Any
    sure: bool = True


_NOT_PLURALS = {"alias", "status", "bus", "gas", "canvas", "bonus", "focus", "campus", "virus", "series",
                "news", "atlas", "minus", "plus", "lens", "this", "always", "analysis", "basis", "address"}


def _stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and \
        word not in _NOT_PLURALS else word


_FUNCTION_WORDS = set("""a an the to at of in on for from by with and or is are be it its as this that
which what who whom when where if into onto than then so such e g eg example one""".split())


def words_of(text: str, keep: bool = True) -> set[str]:
    """The lower-case English words of a name or a description, plurals cut; without
    function words ("the", "to", "at") unless `keep` (a name's "from", "to" are roles)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    found = {_stem(w) for w in re.findall(r"[A-Za-z]+", spaced)}
    return found if keep else found - _FUNCTION_WORDS


# ------------------------------------------------------------------ what a parameter wants

@dataclass(frozen=True)
class Want:
    """One parameter as this module sees it: the shape of value it takes, the words of its
    name and of its description (its roles), and whether it is a list of such values."""
    name: str
    shape: str
    named: frozenset
    about: frozenset
    many: bool = False
    required: bool = False


_PERSON_NAMES = {"payer", "payee", "assignee", "recipient", "instructor", "coach", "teacher",
                 "trainer", "surname", "sender", "attendee", "contact", "person", "owner",
                 "friend", "guest", "driver", "host", "partner", "companion", "buddy", "opponent"}
_ROOM_NAMES = {"room", "area", "zone"}
_BY_NAMES = {"artist", "author", "singer", "band", "director", "composer", "writer", "creator",
             "performer"}


def want_of(name: str, schema: Mapping, required: bool = False) -> Want | None:
    """What a parameter takes, when it is one this module fills; None for the others
    (numbers, enums, booleans, dates, times, e-mail addresses, currencies ...: slots.py).
    (Cached on what it reads: every request brings the same schemas again.)"""
    items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
    kind = schema.get("type")
    return _want_of(name, tuple(kind) if isinstance(kind, list) else kind, str(schema.get("description") or ""),
                    "enum" in schema, str(schema.get("format") or ""), bool(items.get("enum")),
                    str(items.get("type", "string")), str(items.get("description") or ""), required)


@lru_cache(maxsize=4096)
def _want_of(name: str, kind: Any, described: str, enum: bool, form: str, items_enum: bool,
             items_type: str, items_about: str, required: bool) -> Want | None:
    schema = {"type": kind, "description": described, "format": form}
    if enum:
        schema["enum"] = True
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, tuple) else kind
    named = frozenset(words_of(name))
    about = frozenset(words_of(str(schema.get("description") or ""), keep=False))
    described = str(schema.get("description") or "")
    if named & _BY_NAMES:
        return None  # "by The Beatles", "周杰伦的": understand.by_whom reads who made it
    if kind == "array":
        if items_enum:
            return Want(name, "enums", named, about, True, required)
        if items_type != "string":
            return None
        inner = f"{described} {items_about}"
        if re.search(r"(?i)e-?mail|邮箱", inner):
            return Want(name, "email", named, about, True, required)
        if named & _ROOM_NAMES:
            return Want(name, "room", named, about, True, required)
        person = named & _PERSON_NAMES or re.search(r"(?i)\b(?:contacts?|people|persons?|names)\b", inner)
        return Want(name, "person" if person else "text", named, about, True, required)
    if kind not in (None, "string") or "enum" in schema or schema.get("format") in ("date", "time",
                                                                                      "email"):
        return None
    if named & {"email", "mail"} or re.search(r"(?i)\be-?mail address|邮箱|邮件地址", described) and \
            not re.search(r"(?i)\bname\b|\bphone\b|^\s*who\b", described):
        return None  # an e-mail address only: slots.find_emails reads it
    return Want(name, _string_shape(named, about, described), named, about, False, required)


def shape_of(name: str, schema: Mapping) -> str:
    want = want_of(name, schema)
    return want.shape if want else ""


def _string_shape(named: frozenset, about: frozenset, described: str) -> str:
    if named & {"url", "link", "uri", "href", "website", "webpage"} or \
            re.search(r"(?i)\burl\b|网址|链接", described):
        return "url"
    if named & {"repo", "repository"} or re.search(r"(?i)owner/(?:name|repo)", described):
        return "repo"
    if named & {"branch"} or named & {"head", "base"} and "branch" in about:
        return "branch"
    if named & {"path", "file", "filename"} or re.search(r"(?i)\bfile ?name\b|\bpath\b|文件名|路径",
                                                         described):
        return "file"
    if named & {"phone", "mobile", "tel", "telephone", "cell"}:
        return "phone"
    if named & {"version"}:
        return "version"
    if named & {"channel"}:
        return "channel"
    if named & {"address", "street"}:
        return "address"
    if named & {"zone", "timezone", "tz"} and named & {"from", "to", "source", "target"}:
        return "zone"
    if named & _PERSON_NAMES or named & {"last", "first", "family", "full"} and "name" in named or \
            re.match(r"(?i)\s*who\b", described) or \
            named == {"name"} and about & {"contact", "person", "people", "passenger", "customer"}:
        return "person"
    if named & _ROOM_NAMES:
        return "room"
    if named & {"device", "speaker"}:
        return "device"
    if named & {"cinema", "theater", "theatre", "pharmacy", "gym", "venue"}:
        return "venue"
    if named & {"folder", "directory", "dir"}:
        return "folder"
    return "text"


def wants_of(tool_props: Mapping, required: list[str]) -> list[Want]:
    found = []
    for name, schema in tool_props.items():
        want = want_of(name, schema if isinstance(schema, Mapping) else {}, name in required)
        if want is not None:
            found.append(want)
    return found


# ------------------------------------------------------------------ values by their shape

URL = re.compile(r"(?i)\b(?:https?://|www\.)[^\s，。！？、；“”\"'<>]+")
_REPO = re.compile(r"(?<![\w./:@~\\-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*[A-Za-z0-9])(?![\w/])")
_EXTENSIONS = ("txt md markdown pdf doc docx xls xlsx csv tsv ppt pptx key pages numbers odt rtf "
               "png jpg jpeg gif svg webp heic bmp tif tiff mp3 wav flac mp4 mov avi mkv zip rar 7z "
               "tar gz tgz json yaml yml xml html htm css js ts jsx tsx py ipynb java go rs c cpp h "
               "rb php sh sql log ini cfg toml epub apk exe dmg").split()
_FILE = re.compile(r"(?i)(?<![\w.@/\\~-])((?:[A-Za-z]:\\|~/|\.{0,2}/)?(?:[\w" + CJK + r".-]+[/\\])*"
                   r"[\w" + CJK + r"-][\w" + CJK + r".-]*\.(?:" + "|".join(_EXTENSIONS) +
                   r"))(?![\w.])")
_QUOTED_FILE = re.compile(r"(?i)['\"“‘]([^'\"“”‘’]+\.(?:" + "|".join(_EXTENSIONS) + r"))['\"”’]")
_PHONE = re.compile(r"(?<![\w+.:/-])(\+?\d[\d -]{5,}\d)(?![\w.:/-]|\s*(?:(?i:am|pm|a\.m|p\.m|km|kg|ml|cm)\b|[%°]|"
                    r"点|号|年|月|日|元|块))")
_VERSION = re.compile(r"(?i)(?<![\w.])(v\d+(?:\.\d+){1,3}|\d+(?:\.\d+){2,3})(?![\w.])")
_VERSION_CUE = re.compile(r"(?i)\b(?:version|release|ver)\s+(\d+(?:\.\d+){1,3})\b|(\d+(?:\.\d+){1,3})\s*版本?")
_CHANNEL = re.compile(r"(?<![\w#])(#[\w" + CJK + r"-]+)")
_CHANNEL_ZH = re.compile(r"(?<![\w#])([A-Za-z][\w-]*)\s*频道")
_STREET = re.compile(r"\b(\d+[A-Z]?\s+(?:[A-Z][\w'.-]*\s+){0,3}(?:Street|St|Road|Rd|Avenue|Ave|Parkway|"
                     r"Pkwy|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Place|Pl|Court|Ct|Square|Sq|Highway|"
                     r"Hwy|Terrace|Row)\b\.?(?:,?\s*(?:Suite|Apt|Unit|Floor|Fl|Room)\.?\s*\w+)?)")
_ADDRESS_ZH = re.compile(r"([" + CJK + r"]{2,}?(?:省|市|区|县)[" + CJK + r"\w]*?\d+号(?:楼|院)?)")
_ADDRESS_CUE = re.compile(r"(?:地址(?:是|为|在)?|address(?:\s+is)?)\s*[:：]?\s*([^，。！？,;；\s]+)", re.I)


def _free(words: slots.Words, start: int, end: int) -> bool:
    return words.free(start, end)


def shaped(words: slots.Words, shape: str) -> list[Span]:
    """Every free value of one shape in the words, in order (not claimed)."""
    rest, found = words.rest, []
    if shape == "url":
        found = [Span(m.start(), m.start() + len(v), v) for m in URL.finditer(rest)
                 for v in [m.group(0).rstrip(".,;:!?)）")]]
    elif shape == "repo":
        found = [Span(m.start(1), m.end(1), m.group(1)) for m in _REPO.finditer(rest)
                 if not re.fullmatch(r"[\d/.-]+", m.group(1)) and not URL.search(rest[max(0, m.start() - 8):m.end()])]
    elif shape == "file":
        found = [Span(m.start(1), m.end(1), m.group(1)) for m in _QUOTED_FILE.finditer(rest)]
        found += [Span(m.start(1), m.end(1), m.group(1)) for m in _FILE.finditer(rest)
                  if not any(s.start <= m.start(1) < s.end for s in found)]
    elif shape == "phone":
        found = [Span(m.start(1), m.end(1), m.group(1)) for m in _PHONE.finditer(rest)
                 if len(re.sub(r"\D", "", m.group(1))) >= 7
                 and not re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", m.group(1))]
    elif shape == "version":
        found = [Span(m.start(1), m.end(1), m.group(1)) for m in _VERSION.finditer(rest)]
        found += [Span(m.start(k), m.end(k), m.group(k)) for m in _VERSION_CUE.finditer(rest)
                  for k in (1, 2) if m.group(k) and not any(s.start == m.start(k) for s in found)]
    elif shape == "channel":
        found = [Span(m.start(1), m.end(1), m.group(1)) for m in _CHANNEL.finditer(rest)]
        found += [Span(m.start(0), m.end(0), "#" + m.group(1)) for m in _CHANNEL_ZH.finditer(rest)
                  if not found]
    elif shape == "address":
        found = [Span(m.start(1), m.end(1), m.group(1).strip()) for p in (_ADDRESS_CUE, _STREET)
                 for m in p.finditer(rest)]
        for m in _ADDRESS_ZH.finditer(rest):
            lead = re.match(r"(?:地址(?:是|为|在)?[:：]?|[日号来到去在至从往])*", m.group(1))
            if not any(s.start <= m.start(1) < s.end for s in found):
                found.append(Span(m.start(1) + lead.end(), m.end(1), m.group(1)[lead.end():]))
    elif shape == "room":
        found = rooms_in(rest)
    elif shape == "venue":
        found = [Span(m.start(1) + len(lead), m.end(1), m.group(1)[len(lead):]) for m in _VENUE.finditer(rest)
                 for lead in [re.match(r"(?:在|去|到|的)*", m.group(1)).group(0)]]
    elif shape == "device":
        found = devices_in(rest)
    return sorted((s for s in found if _free(words, s.start, s.end)), key=lambda s: s.start)


# Rooms of a home, in English and Chinese, longest first: what a smart-home tool's "room"
# takes ("the kitchen lights" → kitchen, "客厅的灯" → 客厅).
ROOMS = sorted("""living room|dining room|master bedroom|guest room|guest bedroom|kids room|bedroom|
kitchen|study|office|hallway|hall|corridor|bathroom|toilet|laundry room|garage|basement|attic|
balcony|porch|patio|garden|nursery|playroom|den|lounge|entryway|closet|
客厅|餐厅|主卧|次卧|卧室|儿童房|书房|厨房|走廊|过道|玄关|卫生间|洗手间|浴室|阳台|车库|地下室|阁楼|花园|
衣帽间|客房|洗衣房""".replace("\n", "").split("|"), key=len, reverse=True)
_ROOM = re.compile(r"(?i)(?<![A-Za-z])(" + "|".join(map(re.escape, ROOMS)) + r")(?![A-Za-z])")
_DEVICE_WORDS = r"speakers?|tv|television|soundbar|stereo|音箱|音响|电视|电视机|播放器"
_DEVICE = re.compile(r"(?i)(?:(?:the\s+)?(" + "|".join(map(re.escape, ROOMS)) + r")\s*(?:的)?\s*)?"
                     r"(?<![A-Za-z])(" + _DEVICE_WORDS + r")(?![A-Za-z])")


def rooms_in(text: str) -> list[Span]:
    return [Span(m.start(1), m.end(1), m.group(1)) for m in _ROOM.finditer(text)]


def devices_in(text: str) -> list[Span]:
    """"kitchen speaker", "the living room TV", "卧室音箱": a device with its room if said;
    a bare device word ("the speaker") is not worth sending."""
    found = []
    for m in _DEVICE.finditer(text):
        if m.group(1):
            joined = text[m.start(1):m.end(2)].replace("的", "")
            found.append(Span(m.start(1), m.end(2), re.sub(r"\s+", " ", joined)))
    return found


# ------------------------------------------------------------------ cues

@dataclass(frozen=True)
class Cue:
    """Words that introduce a value for one of `roles`; the value follows (at `end`), or,
    for a cue that comes after its value ("bug 标签"), precedes it (at `start`)."""
    start: int
    end: int
    roles: frozenset
    before: bool = False   # the value comes before the cue
    value: tuple | None = None  # where the value is, when the cue's pattern marks it ("v")


# (roles, English cue, Chinese cue): the words that introduce a value for a parameter whose
# name (or description) has one of the roles. An English cue is matched as whole words.
CUES = (
    ("name title label", r"called|named|call it|name it|with the name|name(?:d)? it", r"名字叫|名字是|名字为|名为|"
     r"取名为|取名叫|取名|命名为|叫做|(?<![叫提])叫(?![我醒个辆车一])"),
    ("label tag", r"labell?ed|labels?(?: it)?(?: as)?|tag(?:ged|s)?(?: it)?(?: with)?|with the label",
     r"标签(?:是|为|叫|写)?"),
    ("title subject name heading", r"titled|entitled|title(?: it)?|with the title", r"标题(?:是|为|叫|写)?"),
    ("subject title topic", r"subject(?: line)?(?: is)?|with the subject(?: line)?", r"主题(?:是|为|叫)?"),
    ("description detail", r"description|described as", r"描述(?:是|为|写)?|简介(?:是|为|写)?"),
    ("reason purpose memo note remark comment description label", r"reason(?: is)?|memo|purpose",
     r"备注(?:是|为|写)?|理由(?:是|为)?|原因(?:是|为)?|用途(?:是|为)?|事由"),
    ("message note greeting comment", r"message(?: is)?|with the message|with a note|note saying",
     r"留言(?:写|是|为)?|附言(?:是|写)?|祝福语(?:是)?"),
    ("body text content message", r"saying|that says|body|with the text|content|tell (?:the |my )?[\w#@\x00 -]+? that",
     r"内容(?:是|为|写)?|正文(?:是|为|写)?|说一声|(?<![怎再])说(?![明话])"),
    ("question prompt", r"question(?: is)?|asking", r"问题(?:是|为)?|问大家"),
    ("option choice answer", r"options?|choices?|with(?= [^,.]+ or )", r"选项(?:有|是|为)?"),
    ("alias slug ending custom", r"alias|custom (?:ending|name|slug)|slug", r"后缀(?:用|是|为)?|别名(?:是|为|用)?"),
    ("instructor coach teacher trainer host partner companion buddy opponent",
     r"with|instructor|coach|teacher|taught by|led by",
     r"教练(?:是|为)?|老师(?:是|为)?"),
    ("payer from sender debtor", r"from|ask|request(?: money| payment)? from", r"向|跟|找|问"),
    ("recipient to payer assignee contact", r"to", r"给"),
    ("assignee to owner responsible", r"to|assign(?:ed)? to", r"分配给|交给|指派给|指定给|让"),
    ("last surname family", r"last name|surname|family name|passenger|check in|check-in",
     r"姓氏(?:是|为)?|姓"),
    ("contact", r"contacts?\s*:?|save|add", r"联系人[：:]?|新建联系人|把"),
    ("query search keyword term word", r"containing|that contains?|mentioning|with the words?|named|called",
     r"包含|含有"),
    ("company employer organization organisation work", r"works? (?:at|for)|employed (?:at|by)", r"公司(?:是|为)|在"),
    ("allow allowed except whitelist", r"let|calls? from|except(?: calls? from)?", r"除了"),
    ("near around location area address", r"near(?:by)?|around|close to|next to|within\b[^,.;?]*?\bof",
     ""),
    ("pharmacy cinema theater theatre venue store shop restaurant gym", r"at", r"在"),
    ("folder directory dir", r"in (?:my|the)",
     rf"在(?P<v>[\w{CJK}]{{1,10}}?)(?:文件夹|目录)?(?:里|中|下)?(?=找|搜|查|帮)"),
    ("ingredient", r"of", rf"(?:(?<=\x00)|(?<=[杯克勺匙]))(?:杯|克|汤匙|茶匙|勺|盎司|毫升)?"
     rf"(?!是|等于|换算|有|多少|能|可以|的)(?P<v>[{CJK}]{{1,6}}?)(?=是|等于|换算|有|多少|能|可以|的|，|$)"),
    ("color colour", r"(?:make|turn|set|change)\b[^,.]*?\b(?:lights?|lamps?|bulbs?)\s+(?:to\s+)?",
     r"调成|变成|换成|改成|设为|调为"),
    ("description reason purpose for", r"(?:spent|spend|paid|pay|cost|costs|log|logged|expense|request(?:ed)?|"
     r"owes?|owed|charged?)\b[^,;.!?]*?\b(?:for|on)", ""),
    # What money is for, said in Chinese after the amount: "1000 元房租", "88 元，电影票".
    ("reason purpose memo", "", rf"(?:(?<=[元块钱])|(?<=\x00)[，,]?)\s*(?!备注|理由|原因|用途|留言|事由)(?P<v>[{CJK}]{{2,6}})$"),
    ("text message reminder what content task", r"remind me (?:to|that|about)|reminder (?:to|that)",
     r"提醒我(?:去)?[：:]?"),
    ("item thing product grocery", r"add|put|buy|get|pick up|need to buy|need",
     r"加上|添加|加|买|记一下|记上|把"),
    ("from source start head origin", r"from|off|based on|branching from|starting from", r"从|基于"),
    ("into base target", r"into|onto|to", r"合到|合并到|合进|合入"),
    ("branch head name new", r"branch(?: called| named)?|called|named", r"分支(?:叫|名为|是)?|叫"),
)
# Cues that come after their value (Chinese): "bug 标签", "老婆的电话可以进来", "春熙路附近".
AFTER = (
    ("label tag", r"标签"),
    ("allow allowed except whitelist", r"的电话(?:可以|能|也可以)?"),
    ("near around location area address", r"附近|周边|周围|(?<![那这哪旁身手左右东西南北里外上下前后])边(?:上)?"),
    ("list", r"清单|列表|(?<=[a-z] )list\b"),
    ("folder directory dir", r"文件夹|目录(?!下)"),
    ("description reason purpose", r"花了|花费|用了|消费了?"),
    ("branch head from source", r"分支"),
)
_EN_CUES = [(frozenset(roles.split()), re.compile(rf"(?i)(?<![A-Za-z])(?:{en})(?![A-Za-z])"))
            for roles, en, _ in CUES if en]
_ZH_CUES = [(frozenset(roles.split()), re.compile(zh)) for roles, _, zh in CUES if zh]
_AFTER_CUES = [(frozenset(roles.split()), re.compile(zh)) for roles, zh in AFTER if zh]


def cues_for(want: Want, words: slots.Words, strong_only: bool = False) -> list[Cue]:
    """The cues in the words that introduce a value for this parameter: those whose roles
    include a word of its name (listed first), then, for a person (a name has a look of its
    own, a phrase has not) and unless `strong_only`, those with a word of its description.
    A cue inside a value already taken does not count."""
    rest, strong, weak = words.rest, [], []
    for roles, pattern, before, fits in _patterns_for(want.named, want.about if want.shape == "person" and
                                                      not strong_only else frozenset()):
        for m in pattern.finditer(rest):
            value = m.span("v") if "v" in pattern.groupindex and m.group("v") else None
            (strong if fits == 2 else weak).append(Cue(m.start(), m.end(), roles, before, value))
    return sorted(strong, key=lambda c: c.start) + sorted(weak, key=lambda c: c.start)


@lru_cache(maxsize=4096)
def _patterns_for(named: frozenset, about: frozenset) -> tuple:
    """The cue patterns whose roles a parameter has: (roles, pattern, after its value?,
    2 by its name or 1 by its description). (Cached: the same parameters come back.)"""
    found = []
    for before, table in ((False, _EN_CUES + _ZH_CUES), (True, _AFTER_CUES)):
        for roles, pattern in table:
            fits = 2 if roles & named else 1 if roles & about else 0
            if fits:
                found.append((roles, pattern, before, fits))
    return tuple(found)


# ------------------------------------------------------------------ reading a value at a cue

_OPEN, _CLOSE = "\"'“‘「《『", "\"'”’」》』"
_LEAD_IN = re.compile(r"(?i)[\s:：,，]*(?:(?:is|as|it|to|was|be|of|are)\s+)*[\s:：]*(?:是|为|叫|写|成|做)?[\s:：]*")
# Where a phrase ends: punctuation, a taken value, or a word that starts another part.
_STOP_EN = re.compile(r"(?i)\s*[,;!?]|\.(?!\d|\w)|\x00|\s+(?:and|but|then|also|so)\s+(?=(?:make|set|add|label|tag|"
                      r"allow|notify|cc|send|put|mark|give|assign|include|use|keep|turn|call|title|name|"
                      r"it|the|with|without|no|please|let|make|describe|description|saying)\b)|"
                      r"\s+(?:please|with the|without|within|labell?ed|tagged|titled|called|named|saying|"
                      r"description|subject|reason|message|cc)\b")
_STOP_ZH = re.compile(r"[，,。！？!?；;、\x00]")


def quoted_at(rest: str, at: int) -> Span | None:
    """A quoted text right at `at` (after an "is", a colon, 是/为/叫): "'take pills'", “合同已签”."""
    lead = _LEAD_IN.match(rest, at)
    k = lead.end() if lead else at
    if k < len(rest) and rest[k] in _OPEN:
        close = _CLOSE[_OPEN.index(rest[k])]
        end = rest.find(close, k + 1) if close != "'" else _apostrophe_close(rest, k + 1)
        if end > k + 1:
            return Span(at, end + 1, rest[k + 1:end].strip())
    return None


def _apostrophe_close(rest: str, at: int) -> int:
    """The closing ' of a quote: one followed by a space, punctuation or the end ("'gym'",
    not the apostrophe of "Queen's")."""
    for m in re.finditer("'", rest[at:]):
        k = at + m.start()
        if k + 1 >= len(rest) or not (rest[k + 1].isascii() and rest[k + 1].isalnum()):
            return k
    return -1


def phrase_at(rest: str, at: int) -> Span | None:
    """The phrase that starts at `at`: quoted, or up to where another part of the sentence
    starts (a comma, "and make it public", a taken value, "，")."""
    said = quoted_at(rest, at)
    if said:
        return said
    lead = _LEAD_IN.match(rest, at)
    k = lead.end() if lead else at
    zh = bool(re.match(rf"\s*[{CJK}]", rest[k:k + 2]))
    stop = (_STOP_ZH if zh else _STOP_EN).search(rest, k)
    end = stop.start() if stop else len(rest)
    value = rest[k:end].strip(" \t'\"“”‘’「」")
    value = re.sub(r"(?i)(?:\s+(?:please|instead|too|as well|for|at|on|in|to|of|by|with|from|and|or|the|a|an))+$",
                   "", value)
    value = re.sub(r"[的了吧呢吗啊]+$", "", value) if zh else re.sub(r"^(?:the|a|an|my|our|some)\s+", "", value)
    if not value or not re.search(rf"[\w{CJK}]", value):
        return None
    return Span(at, k + len(rest[k:end].rstrip()), value)


def phrase_before(rest: str, at: int) -> Span | None:
    """The Chinese (or code-like) phrase right before `at`, back to punctuation, a taken
    value or a filler ("帮我", "找一下", "在"): "春熙路附近" → 春熙路."""
    head = rest[:at].rstrip()
    quote = re.search(r"['\"“‘「]([^'\"“”‘’「」]+)['\"”’」]$", head)
    if quote:
        return Span(quote.start(), at, quote.group(1))
    m = re.search(r"([A-Za-z][\w.-]*)$", head) if re.search(r"[A-Za-z]$", head) else \
        re.search(rf"([\w{CJK}][\w{CJK}.-]*)$", head)
    if not m:
        return None
    said = m.group(1)
    said = re.sub(r"^(?:[请帮给把往在向从用找查搜让叫要想加上添到]|帮我|找一下|找找|查一下|一下|加上|添加|"
                  r"现在开着的|开着的|现在|最近的|附近的|我的|我)+", "", said).strip()
    said = re.sub(r"^.*(?:加到|放到|记到|添加到|存到|到)", "", said)
    said = re.sub(r"^的", "", said)
    if not said or not re.search(rf"[\w{CJK}]", said):
        return None
    return Span(head.rfind(said), at, said)


_TITLES = r"(?:Dr|Mr|Mrs|Ms|Prof|Mx)\.?\s+"
_NOT_PEOPLE = set("""I Me My The A An It This That Monday Tuesday Wednesday Thursday Friday Saturday
Sunday January February March April May June July August September October November December
Today Tomorrow Tonight Please Hi Hello OK Ok""".split())
_NAME_EN = re.compile(rf"({_TITLES})?([A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+){{0,2}})")
_NAME_ZH = re.compile(rf"([小老阿][{CJK}]|[{CJK}]{{2,3}})")
_NAME_ZH_STOP = set("发收存加到的是在给和跟说要负责做来了，,。把让请都也就可以打电话上班工作收款吗呢")


def person_at(rest: str, at: int) -> Span | None:
    """A person at `at`: an e-mail address, a phone number, a capitalised name ("Priya",
    "Ken Watanabe", "Dr. Patel"), or a Chinese name ("小王", "老张", "李雷", "王芳")."""
    lead = re.match(r"[\s:：]*(?:是|为)?[\s:：]*", rest[at:])
    k = at + (lead.end() if lead else 0)
    mail = slots.EMAIL.match(rest, k)
    if mail:
        return Span(at, mail.end(), mail.group(0))
    phone = _PHONE.match(rest, k)
    if phone and len(re.sub(r"\D", "", phone.group(1))) >= 7:
        return Span(at, phone.end(1), phone.group(1))
    m = _NAME_EN.match(rest, k)
    if m and m.group(2).split()[0] not in _NOT_PEOPLE and not find_places(m.group(2)):
        return Span(at, m.end(), (m.group(1) or "") + m.group(2))
    m = _NAME_ZH.match(rest, k)
    if m:
        said = m.group(1)
        if said[0] not in "小老阿":
            said = said[:2] if len(said) == 3 and said[2] in _NAME_ZH_STOP else said
            said = said[:2] if len(said) == 3 and rest[k + 3:k + 4] not in ("", "，", ",", "。", " ") \
                and not re.match(r"[的和、]", rest[k + 3:k + 4]) else said
        if any(c in _NAME_ZH_STOP for c in said) or said in ("大家", "所有", "自己", "别人", "我们"):
            return None
        return Span(at, k + len(said), said)
    return None


def surname_at(rest: str, at: int) -> Span | None:
    """A last name: "Smith", "Nguyen"; after 姓, one Chinese character ("姓王")."""
    k = at + len(re.match(r"[\s:：]*(?:是|为)?[\s:：]*", rest[at:]).group(0))
    zh = re.match(rf"([{CJK}])(?![{CJK}](?![，,。\s]|$))", rest[k:])
    if zh and at > 0 and rest[at - 1] in "姓氏":
        return Span(at, k + 1, zh.group(1))
    m = re.match(r"([A-Z][a-z'’-]+(?:-[A-Z][a-z]+)?)", rest[k:])
    if m and m.group(1) not in _NOT_PEOPLE:
        return Span(at, k + m.end(), m.group(1))
    return None


_SLUG = re.compile(r"[\s:：]*(?:是|为|叫)?[\s:：]*([A-Za-z0-9][\w./-]*[A-Za-z0-9]|[A-Za-z0-9])(?![\w/])")


def slug_at(rest: str, at: int) -> Span | None:
    """A name written as a code: "hotfix-2.3.1", "feature/login-form", "dev"."""
    m = _SLUG.match(rest, at)
    return Span(at, m.end(1), m.group(1)) if m else None


def slug_before(rest: str, at: int) -> Span | None:
    m = re.search(r"([A-Za-z0-9][\w./-]*[A-Za-z0-9]|[A-Za-z0-9])\s*$", rest[:at])
    return Span(m.start(1), at, m.group(1)) if m else None


_LIST_SPLIT = re.compile(r"\s*(?:,\s*(?:and|or)\s+|,|\band\b|\bor\b|、|和|及|与|或者|或|/)\s*")


def list_at(rest: str, at: int, item: str) -> Span | None:
    """A list at `at`: "milk, eggs and bread", "A, B and C", "牛奶、鸡蛋和面包", "小明和老张";
    items are short (a verb or a taken value ends the list: ", allow multiple answers")."""
    lead = _LEAD_IN.match(rest, at)
    k = lead.end() if lead else at
    zh = bool(re.search(rf"[{CJK}]", rest[k:k + 12]))
    if zh:
        stop = re.compile(rf"[，,。！？!?；;\x00]|加到|放到|添加到|记到|到(?=[{CJK}]*(?:清单|列表|里))|"
                          r"的电话|的(?=[" + CJK + "]{0,4}$)|(?:的|这个|这几个)?(?:标签)|"
                          r"(?<=[" + CJK + r"])里|可以|负责")
    else:
        stop = re.compile(r"(?i)[;!?\x00，。！？；]|\.(?!\d)|\s+(?:to|on|onto|into|in)\s+(?:the|my|our)\b|"
                          r"\s+(?:call|calls|ring|through|please|as)\b|,\s*(?=(?:allow|make|add|set|and|"
                          r"let|notify|it|anonymous|but)\b)|\s+but\b")
    m = stop.search(rest, k)
    body = rest[k:m.start() if m else len(rest)]
    if item == "person":
        people = [person_at(body, p.start()) for p in re.finditer(r"[^\s,、和及与]+", body)
                  if p.start() == 0 or re.search(r"(?:,|\band|\bor|和|、|及|与)\s*$", body[:p.start()])]
        people = [p for p in people if p]
        items = [p.value for p in people]
        if not items:
            return None
        last = people[-1]
        return Span(at, k + last.end, items)
    items = [re.sub(r"(?i)^(?:the|a|an|some|my)\s+", "", s.strip(" '\"“”‘’")) for s in _LIST_SPLIT.split(body)]
    items = [s for s in items if s and re.search(rf"[\w{CJK}]", s)]
    if not items or any(len(s.split()) > 4 or len(s) > 30 for s in items):
        return None
    if any(s.lower() in _PRONOUNS for s in items):
        return None
    return Span(at, k + len(body.rstrip()), items)


_PRONOUNS = {"it", "them", "this", "that", "these", "those", "something", "anything", "stuff",
             "things", "some", "here", "there", "me", "us", "you", "someone", "somebody", "anyone",
             "the", "my", "a", "an", "our", "your", "his", "her", "their",
             "东西", "点东西", "一些东西", "它", "它们", "这里", "那里", "这儿", "那儿", "某人", "那", "这",
             "那边", "这边"}


# ------------------------------------------------------------------ matching spans to parameters

def read(want: Want, cue: Cue, rest: str) -> Span | None:
    """The value a cue introduces for a parameter, read by what the parameter takes."""
    if cue.value:
        return Span(cue.value[0], cue.value[1], rest[cue.value[0]:cue.value[1]].strip())
    if cue.before:
        if want.shape == "branch":
            return slug_before(rest, cue.start)
        said = phrase_before(rest, cue.start)
        if said and want.many:
            items = [s for s in _LIST_SPLIT.split(said.value) if s]
            return Span(said.start, cue.end, items)
        return Span(said.start, cue.end, said.value) if said else None
    if rest[cue.start:cue.end].strip() == "给" and want.shape == "text" and not want.many:
        person = person_at(rest, cue.end)  # "给老张发邮件": 老张, not all that follows 给
        if person and re.match(r"\s*(?:一下)?[发打寄送转回写]", rest[person.end:]):
            return person
    if want.shape == "person":
        if want.many:
            return list_at(rest, cue.end, "person")
        if cue.roles & {"last", "surname"}:
            return surname_at(rest, cue.end)
        return person_at(rest, cue.end)
    if want.shape == "branch":
        return slug_at(rest, cue.end)
    if want.many:
        return list_at(rest, cue.end, "text")
    return phrase_at(rest, cue.end)


def fits(want: Want, span: Span, cue: Cue, rest: str) -> bool:
    """Whether a value read at a cue is one this parameter can take: a generic cue ("for",
    "at", "with", "from", "to", "在") only with a value of the right look."""
    value = span.value
    text = " ".join(value) if isinstance(value, list) else str(value)
    if not text.strip() or text.lower() in _PRONOUNS:
        return False
    cue_words = rest[cue.start:cue.end].strip().lower()
    if cue_words in ("at", "在") and want.shape == "text" and not cue.before:
        return bool(re.match(rf"(?:the\s+)?[A-Z]|[{CJK}]{{2,}}", text)) and len(text) <= 40
    if cue_words in ("for", "on") and want.shape == "text":
        return bool(re.match(r"(?i)(?:the|a|an|my)?\s*[a-z]", text)) and len(text.split()) <= 6 and \
            not re.match(r"(?i)(?:the\s+)?(?:next|last|this|today|tomorrow|tonight|\d)", text)
    if cue_words in ("at", "在") and want.shape == "venue" and not cue.before:
        return bool(re.match(rf"(?:the\s+)?[A-Z]|[{CJK}]{{2,}}", text)) and len(text) <= 40
    if cue_words in ("in my", "in the") and want.shape in ("text", "folder"):
        return bool(re.search(r"(?i)\bfolder\b|\bdirectory\b", rest[cue.end:cue.end + len(text) + 12])) \
            and re.sub(r"(?i)\s*\b(?:folder|directory)\b.*$", "", text) != ""
    return True


def clean(want: Want, value: Any, cue: Cue, rest: str) -> Any:
    """A value as sent: "Downloads" for "my Downloads folder", 腾讯 for "在腾讯上班"."""
    if isinstance(value, str) and want.named & {"company", "employer", "organization", "organisation"}:
        value = re.sub(r"(?:上班|工作)$", "", value)
    if isinstance(value, str) and rest[cue.start:cue.end].strip().lower() in ("in my", "in the"):
        return re.sub(r"(?i)\s*\b(?:folder|directory)\b.*$", "", value).strip()
    if isinstance(value, str) and cue.before and want.shape == "folder":
        return re.sub(r"(?:文件夹|目录)$", "", value)
    return value


# The shapes read before the typed values (their digits are not numbers, their words not
# enum values), and those read after (a phrase ends where a date or an amount was taken).
FIRST = ("url", "repo", "file", "phone", "version", "channel", "address", "zone", "email", "enums",
         "folder")
LATER = ("text", "person", "branch", "room", "device", "venue")


def fill(props: Mapping, required: list[str], words: slots.Words, shapes: tuple[str, ...],
         own: set[str] = frozenset(), quoted_only: bool = False) -> dict[str, Any]:
    """Values for the parameters this module fills, of the given shapes, claimed in the
    words: by shape where the shape alone says it (a URL, a file name), else by cue.
    `own`: the tool's own words, never a value ("shopping" is no list's name in "my
    shopping list"). `quoted_only`: a cued text only when it is quoted ("titled 'X'"),
    read before the typed values so a date inside a title stays in the title."""
    found: dict[str, Any] = {}
    for strong_only in (True, False):  # a cue naming a parameter first: "in my X folder" is
        for want in wants_of(props, required):  # the folder's before the query's "named"
            if want.name in found:
                continue
            if want.shape not in shapes and not (quoted_only and want.shape == "text" and not want.many):
                continue
            value = _quoted(want, words, strong_only) if want.shape not in shapes else \
                _value(want, words, props, own, strong_only)
            if value is not None:
                found[want.name] = value
    return found


def _quoted(want: Want, words: slots.Words, strong_only: bool) -> str | None:
    for cue in cues_for(want, words, strong_only):
        span = None if cue.before else quoted_at(words.rest, cue.end)
        if span is not None and span.value:
            words.claim(cue.start, span.end)
            return span.value
    return None


# Roles whose value the words always mark out: when no cue introduces it, it is asked for,
# never taken from the rest of the sentence.
_MARKED = {"label", "tag", "alias", "near", "folder", "directory", "pharmacy", "cinema", "venue",
           "company", "employer", "ingredient", "instructor", "coach", "list", "device", "reason",
           "memo", "note", "greeting", "allow", "except", "channel", "option", "choice"}


def cue_only(props: Mapping, required: list[str]) -> set[str]:
    """The parameters that take only a value the words mark out (a shape, or a cue): a
    person, a repository, a file, a URL, a place to search around ... When none is found,
    a required one is asked for, an optional one left out."""
    return {w.name for w in wants_of(props, required)
            if w.shape != "text" or w.many or w.named & _MARKED}


_BY_SHAPE = ("url", "repo", "file", "phone", "version", "channel", "address", "room", "device", "venue")
SHAPED = ("url", "repo", "file", "phone", "channel", "address")  # values only their own tools take
# A place of a kind named by its last word: "万达影城", "老百姓大药房", "Odeon cinema".
_VENUE = re.compile(rf"([{CJK}]{{2,8}}?(?:影城|影院|电影院|大药房|药房|药店|健身房|健身中心|酒店|餐厅|饭店))")


def _value(want: Want, words: slots.Words, props: Mapping, own: set[str], strong_only: bool) -> Any:
    if want.shape == "repo":
        return _repository(want, words, props)
    if want.shape == "file":
        return _file(want, words, props)
    if want.shape == "enums":
        return _enums(want, words, props)
    if want.shape in _BY_SHAPE:
        spans = shaped(words, want.shape)
        if want.shape == "version" and not spans:
            return None
        if spans:
            chosen = spans if want.many else spans[:1]
            for s in chosen:
                words.claim(s.start, s.end)
            return [s.value for s in chosen] if want.many else chosen[0].value
        if want.shape not in ("room", "device", "address", "channel", "venue"):
            return None
    if want.shape == "email":
        return _cc(want, words)
    if want.shape == "zone":
        return _zone(want, words)
    for cue in cues_for(want, words, strong_only):
        span = read(want, cue, words.rest)
        span = span and Span(span.start, span.end, span.value, fits(want, span, cue, words.rest))
        if span is None or not span.sure:
            continue  # a generic cue ("at", "for", "在") with a value of the wrong look
        value = clean(want, span.value, cue, words.rest)
        if isinstance(value, str) and value.lower() in own:
            continue
        words.claim(min(cue.start, span.start), max(cue.end, span.end))
        return value
    return None


def _repository(want: Want, words: slots.Words, props: Mapping) -> str | None:
    """An "owner/name" that no branch cue introduces ("from release/2.3" is a branch, "in
    acme/webapp" a repository); the one after "in"/"repo"/"仓库" if several."""
    branches = any(shape_of(n, s) == "branch" for n, s in props.items())
    spans = shaped(words, "repo")
    if branches:
        spans = [s for s in spans if not re.search(r"(?i)(?:\bbranch|\bfrom|\boff|\binto|\bto|分支|从|基于|合到)\s*$",
                                                   words.rest[:s.start])
                 and not re.match(r"\s*分支", words.rest[s.end:])]
    if not spans:
        return None
    cued = [s for s in spans if re.search(r"(?i)(?:\bin|\bon|\bfor|\brepo|\brepository|仓库|在|给)\s*$",
                                          words.rest[:s.start])]
    chosen = (cued or spans)[0]
    words.claim(chosen.start, chosen.end)
    return chosen.value


def _zone(want: Want, words: slots.Words) -> str | None:
    """One end of a time-zone conversion: the first place still free ("3pm in Tokyo in
    London time": from Tokyo, then to London), as the user wrote it (东京, or Tokyo)."""
    for start, end, place in place_spans(words.rest):
        if words.free(start, end):
            words.claim(start, end)
            return place.zh if re.search(f"[{CJK}]", words.text[start:end]) else place.name
    return None


_NEW_NAME = re.compile(r"(?i)(?:\bto|\bas|\binto|\bnamed|\bcalled|改名为|改名成|重命名为|重命名成|改成|改为|命名为|"
                       r"名字叫|叫做|叫|为|成)\s*['\"“‘]?$")


def _file(want: Want, words: slots.Words, props: Mapping) -> str | None:
    """A file name or path; of two ("rename a.txt to b.txt"), the one after "to"/"为"/"成"
    is the new one (a parameter whose name says new/target), the other the current one."""
    spans = shaped(words, "file")
    if not spans:
        return None
    files = [n for n, s in props.items() if shape_of(n, s) == "file"]
    newish = bool(want.named & {"new", "target", "destination", "output"})
    if len(files) >= 2 and len(spans) == 1 and len(shaped(slots.Words(words.text), "file")) >= 2:
        chosen = spans[0]  # the other file parameter took the other one
    elif len(files) >= 2:
        marked = [s for s in spans if _NEW_NAME.search(words.rest[:s.start])]
        if len(spans) >= 2:
            later = marked[-1] if marked else spans[1]
            chosen = later if newish else next(s for s in spans if s is not later)
        else:
            chosen = spans[0] if bool(marked) == newish else None
    else:
        chosen = spans[0]
    if chosen is None:
        return None
    words.claim(chosen.start, chosen.end)
    return chosen.value


def _cc(want: Want, words: slots.Words) -> list[str] | None:
    """E-mail addresses a list takes: those after "cc"/"copy"/"抄送"."""
    cue = re.search(r"(?i)\bcc\b|\bcopy(?:ing)?(?:\s+in)?\b|抄送(?:给)?", words.rest)
    if not cue:
        return None
    found = list(slots.EMAIL.finditer(words.rest, cue.end()))[:5]
    if not found:
        return None
    for m in found:
        words.claim(m.start(), m.end())
    words.claim(cue.start(), cue.end())
    return [m.group(0) for m in found]


_DAY_GROUPS = {"weekdays": ["mon", "tue", "wed", "thu", "fri"], "weekends": ["sat", "sun"]}
_GROUP_WORDS = (("weekdays", r"(?i)\bweekdays?\b|\bevery work ?day\b|\bworkdays?\b|工作日|周一到周五|每个工作日"),
                ("weekends", r"(?i)\bweekends?\b|周末"))


def _enums(want: Want, words: slots.Words, props: Mapping) -> list | None:
    """Several enum values a list takes, in the enum's order: "on Saturdays and Sundays",
    "每周六周日", "every weekday" (mon-fri)."""
    items = props[want.name].get("items") or {}
    values = list(items.get("enum") or [])
    chosen: list = []
    for group, pattern in _GROUP_WORDS:
        for m in re.finditer(pattern, words.rest):
            names = _DAY_GROUPS[group]
            picked = [v for v in values if _day_key(v) in names]
            if len(picked) == len(names):
                chosen += picked
                words.claim(m.start(), m.end())
    lowered = words.rest.lower()
    for value in values:
        for form in _value_forms(value):
            hit = re.search(rf"(?<![a-z]){re.escape(form)}(?![a-z])", lowered)
            if hit and value not in chosen:
                chosen.append(value)
                words.claim(hit.start(), hit.end())
                break
    return [v for v in values if v in chosen] or None


_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _day_key(value: Any) -> str:
    said = str(value).lower()[:3]
    return said if said + "day" in _DAY_NAMES or said in ("tue", "wed", "thu", "sat") else ""


def _value_forms(value: Any) -> list[str]:
    """How a list's enum value is written: its forms, and for a day ("mon", "monday") every
    way of naming it, in English and Chinese ("mondays", "周一", "星期一")."""
    forms = list(slots.enum_forms(value))
    key = _day_key(value)
    if key:
        k = [d[:3] for d in _DAY_NAMES].index(key)
        zh = "一二三四五六日"[k]
        forms += [_DAY_NAMES[k], _DAY_NAMES[k] + "s", f"周{zh}", f"星期{zh}", f"礼拜{zh}"]
        forms += ["周天", "星期天"] if key == "sun" else []
        forms = [f for f in forms if f != key or len(f) > 2]
    return sorted(set(forms), key=len, reverse=True)
