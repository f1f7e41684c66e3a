"""What the offline teaching model says: short, fixed sentences in English or Chinese.

Every reply text is built here from templates filled with what the request
holds: the user's name, the tool results (weather, time, an error, any JSON,
plain text), a clarifying question, or an honest "I can't". Each function takes
`lang` ("en" or "zh") and returns one sentence or a few.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from lesson_lib.offline.understand import (
    CJK,
    LIVE_DATA,
    TOPIC_ZH,
    WINDS_ZH,
    Comparison,
    concepts,
    condition_en,
    condition_zh,
    error_in,
    param_kind,
    properties,
    read_result,
    split_name,
    targets_in,
    tool_name,
)
from lesson_lib.places import lookup
from lesson_lib.text import plural

_VERBS = {"get", "fetch", "query", "lookup", "look", "check", "find", "search", "retrieve",
          "current", "show", "list", "read", "latest", "up", "do", "run"}
_TIME_KEYS = ("current_time", "time", "datetime", "local_time", "now", "date")


# ------------------------------------------------------------------ small pieces

LATIN = re.compile(r"[A-Za-z]{2,}")  # a word a Chinese answer may only quote, never say
_MOMENT = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2}))?")


def quoted_zh(text: str) -> str:
    """`text` inside a Chinese answer: as it is when it is Chinese (or digits and names), in
    “…” when it holds English words, which a Chinese answer quotes, never says as its own."""
    return f"“{text}”" if LATIN.search(text) else text


def date_zh(text: str) -> str:
    """"2026-05-01" → "2026 年 5 月 1 日", "2026-05-01 17:30:00 CST+0800" → "2026 年 5 月 1 日
    17:30", as a Chinese reader writes a date and a time; anything else quoted as it came."""
    found = _MOMENT.search(text or "")
    if not found:
        return quoted_zh(text)
    year, month, day, hour, minute = found.groups()
    said = f"{int(year)} 年 {int(month)} 月 {int(day)} 日"
    return f"{said} {int(hour)}:{minute}" if hour is not None else said


def zone_zh(zone: str) -> str:
    """How a Chinese speaker names a time zone: "Asia/Shanghai" → "北京时间" (China's one
    zone), "America/New_York" → "纽约"; a zone no known city names stays as its IANA id."""
    if zone == "Asia/Shanghai":
        return "北京时间"
    place = lookup(zone.rsplit("/", 1)[-1].replace("_", " "))
    return place.zh if place is not None and place.timezone == zone else zone


def number(value: Any) -> str:
    """16.0 → "16", 60.8 → "60.8"; anything else as written."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def temperature(data: Mapping) -> str:
    """"16°C" / "60.8°F" from {"temperature": 16, "unit": "celsius"}; "" when absent."""
    value = data.get("temperature", data.get("temp"))
    if value is None:
        return ""
    if not isinstance(value, (int, float)):
        return str(value)
    fahrenheit = str(data.get("unit") or "").lower().lstrip("°").startswith("f")
    return number(value) + ("°F" if fahrenheit else "°C")


def place_name(where: str, lang: str) -> str:
    """A place as the answer's language writes it: "Chengdu" ↔ "成都"; unknown ones as given."""
    place = lookup(where) if where else None
    if place is None:
        return where
    return place.zh if lang == "zh" else place.name


def place_argument(arguments: Mapping) -> str:
    """The first argument that names a known place (for results that do not say where)."""
    for value in arguments.values():
        if isinstance(value, str) and lookup(value):
            return value
    return ""


def topic(name: str, lang: str) -> str:
    """What a tool is about, from its name: get_current_weather → "weather" / "天气"."""
    found = sorted(concepts(" ".join(split_name(name))) & set(TOPIC_ZH))
    if lang == "zh":
        return TOPIC_ZH[found[0]] if found else name
    left = [w for w in split_name(name) if w not in _VERBS]
    return " ".join(left) or name


def joined(items: list[str], lang: str) -> str:
    """"a, b and c" / "a、b和c"."""
    if len(items) < 2:
        return "".join(items)
    return ("、".join(items[:-1]) + "和" if lang == "zh" else ", ".join(items[:-1]) + " and ") \
        + items[-1]


def sentences(parts: list[str], lang: str) -> str:
    return ("" if lang == "zh" else " ").join(p for p in parts if p)


# ------------------------------------------------------------------ answers from tool results

def result(name: str, arguments: Mapping, content: Any, lang: str, asked: str = "") -> str:
    """One sentence about one tool result, whatever its shape (`asked`: the user's request,
    whose places name a time zone the way the user did)."""
    data = read_result(content)
    if error_in(data):
        return failed(name, data, lang)
    if isinstance(data, Mapping) and ("temperature" in data or "condition" in data):
        return weather(data, arguments, lang)
    if isinstance(data, Mapping) and any(data.get(k) for k in _TIME_KEYS):
        return clock(data, arguments, lang, asked)
    if isinstance(data, (Mapping, list)):
        return fields(name, data, lang)
    return plain(name, str(data), arguments, lang)


def weather(data: Mapping, arguments: Mapping, lang: str) -> str:
    """"Chengdu is cloudy, 16°C, with a light breeze." / "成都多云，16°C，微风。"."""
    where = place_name(str(data.get("location") or place_argument(arguments)), lang)
    condition, wind = str(data.get("condition") or ""), str(data.get("wind") or "")
    humidity = data.get("humidity")
    if lang == "zh":
        head = (where or "天气") + (quoted_zh(condition_zh(condition)) if condition else "")
        parts = [head, temperature(data), quoted_zh(WINDS_ZH.get(wind, wind)),
                 humidity and f"湿度{humidity}"]
        return "，".join(str(p) for p in parts if p) + "。"
    condition = condition_en(condition)
    verb = "is" if condition.endswith(("y", "overcast", "clear")) else "has"  # sunny / light rain
    head = f"{where or 'The weather'} {verb} {condition}" if condition else where
    parts = [head, temperature(data)]
    if wind:
        windy = wind.endswith(("breeze", "wind", "gale"))
        parts.append(f"with a {wind}" if windy else f"wind {wind}")
    parts.append(humidity and f"humidity {humidity}")
    return ", ".join(str(p) for p in parts if p) + "."


def clock(data: Mapping, arguments: Mapping, lang: str, asked: str = "") -> str:
    """"It is 2026-05-01 17:30:00 CST+0800 in Asia/Shanghai." / "北京时间现在是 2026 年 5 月 1 日
    17:30。" (the tool's own words, in Chinese form; "旧金山现在是 …" for a city the user
    asked about, not "洛杉矶", the city its zone is named after)."""
    moment = next(data[k] for k in _TIME_KEYS if data.get(k))
    zone = data.get("timezone") or arguments.get("timezone") or ""
    if lang == "zh":
        named = [t.value for t in targets_in(asked) if t.timezone == zone and zone != "Asia/Shanghai"]
        where = named[0] if named and CJK.search(named[0]) else zone_zh(str(zone)) if zone else ""
        return f"{where}{' ' if where.isascii() and where else ''}现在是 {date_zh(str(moment))}。"
    return f"It is {moment} in {zone}." if zone else f"It is {moment}."


def failed(name: str, data: Mapping, lang: str) -> str:
    """An error result, said honestly: "I couldn't get the time: Unknown time zone: Mars/Base."."""
    error = (error_in(data) or "").rstrip(".。")
    hint = str(data.get("hint") or "").rstrip(".。")
    lookup_tool = concepts(" ".join(split_name(name))) & set(LIVE_DATA)  # weather, time, news
    if lang == "zh":  # the tool's own words stay as they came, quoted and said to be its own
        what = f"我没能查到{topic(name, lang)}" if lookup_tool else f"{name} 出错了"
        text = f"{what}：工具报错，原文是“{error}”。" if LATIN.search(error) else f"{what}：{error}。"
        return text + ((f"它的提示（原文）：“{hint}”。" if LATIN.search(hint) else f"提示：{hint}。")
                       if hint else "")
    text = f"I couldn't get the {topic(name, lang)}: {error}." if lookup_tool else \
        f"{name} reported an error: {error}."
    return text + (f" Hint: {hint}." if hint else "")


def fields(name: str, data: Any, lang: str) -> str:
    """Any other JSON, field by field: "search_news returned count: 2; items: [...]."."""
    if isinstance(data, list):
        shown = "; ".join(short(item) for item in data[:5]) + ("; …" if len(data) > 5 else "")
        return f"{name} 返回了 {len(data)} 项：{quoted_zh(shown)}。" if lang == "zh" else \
            f"{name} returned {len(data)} items: {shown}."
    shown = "; ".join(f"{k}: {short(v)}" for k, v in data.items())
    return f"{name} 返回：{quoted_zh(shown)}。" if lang == "zh" else \
        ended(f"{name} returned {shown}", lang)


def ended(text: str, lang: str) -> str:
    """`text` with its full stop, unless it ends a sentence already ("…wind." stays)."""
    if text.endswith((".", "!", "?", "。", "！", "？")):
        return text
    return text + ("。" if lang == "zh" else ".")


def short(value: Any, limit: int = 80) -> str:
    """A value on one line, cut at `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


QUOTE_LIMIT = 300  # characters of a plain-text result an answer quotes; a model summarises


def plain(name: str, text: str, arguments: Mapping, lang: str) -> str:
    """A result that is not JSON, quoted as it came: "Chengdu: cloudy 16°C.". A long one is
    quoted up to QUOTE_LIMIT characters, then "…": an answer does not repeat a whole page.
    An agent used as a tool (called with the request as its one `input`, as the Agents
    SDK's agent.as_tool() is) answered in sentences: its answer is passed on as it came."""
    text = short(" ".join(text.split()), QUOTE_LIMIT) if len(text) > QUOTE_LIMIT else text.strip()
    where = place_name(place_argument(arguments), lang)
    if not text:
        return f"{name} 没有返回内容。" if lang == "zh" else f"{name} returned nothing."
    if set(arguments) == {"input"} and ended(text, lang) == text:
        return text
    if lang == "zh":
        if LATIN.search(text):  # the tool's own words, quoted as they came
            return f"{where + '：' if where else ''}{name} 返回（原文）：“{text}”。"
        return ended(f"{where}：{text}" if where else f"{name} 返回：{text}", lang)
    return ended(f"{where}: {text}" if where else f"{name} returned: {text}", lang)


def comparison(asked: Comparison, ranking: list[tuple[Any, float]], lang: str) -> str:
    """"Shanghai is warmer: 22°C, against 18°C in Beijing." / "上海更暖和：22°C，北京18°C。".

    ranking: (call, value) pairs, best first; each call has .arguments and .result."""
    def said(call: Any, value: float) -> tuple[str, str]:
        data = read_result(call.result)
        where = str(data.get("location") or data.get("city") or "") or \
            place_argument(call.arguments) or next(
                (v for v in call.arguments.values() if isinstance(v, str)), "")
        shown = temperature(data) if asked.field == "temp" else number(value)
        return place_name(where, lang), shown or number(value)

    (best, best_shown), *others = [said(c, v) for c, v in ranking]
    if lang == "zh":
        return f"{best}{asked.word}：{best_shown}，" + "，".join(f"{p}{s}" for p, s in others) + "。"
    rest = joined([f"{s} in {p}" for p, s in others], lang)
    return f"{best} is {asked.word}: {best_shown}, against {rest}."


def after_checks(count: int, lang: str) -> str:
    """The prefix of a "keep checking until ..." answer."""
    return f"查了{count}次：" if lang == "zh" else f"After {plural(count, 'check')}:"


# ------------------------------------------------------------------ questions and honest limits

def clarify(tool: Any, param: str, lang: str) -> str:
    """Ask for a required argument: "Which city would you like the weather for?"."""
    name, schema = tool_name(tool), properties(tool).get(param, {})
    kind, what = param_kind(param, schema), " ".join(split_name(param))
    if kind in ("place", "places"):
        return "请告诉我要查哪个城市？" if lang == "zh" else \
            f"Which city would you like the {topic(name, 'en')} for?"
    if kind == "enum":
        values = [str(v) for v in schema.get("enum") or []]
        return f"请告诉我 {param} 选哪个：{'、'.join(values)}？" if lang == "zh" else \
            f"Which {what} would you like: {joined(values, 'en').replace(' and ', ' or ')}?"
    return f"请问{label_zh(param)}（{param}）是什么？" if lang == "zh" else \
        f"What {what} should I use for {name}?"


# Chinese words for the words parameter names are made of, so a question names what it
# asks for in the user's language: "check_in_date" → 入住日期.
_LABELS_ZH = {
    "origin": "出发地", "departure": "出发地", "destination": "目的地", "arrival": "目的地",
    "date": "日期", "day": "日期", "time": "时间", "start": "开始", "end": "结束",
    "symbol": "股票代码", "ticker": "股票代码", "text": "文字", "amount": "金额", "value": "数值",
    "title": "标题", "task": "任务", "content": "内容", "message": "内容", "body": "正文",
    "city": "城市", "country": "国家", "location": "地点", "place": "地点", "sku": "商品编号",
    "barcode": "条形码", "tracking": "快递", "number": "号码", "flight": "航班", "word": "单词",
    "song": "歌名", "artist": "歌手", "movie": "电影", "team": "球队", "dish": "菜名",
    "food": "食物", "minutes": "分钟数", "nights": "晚数", "days": "天数", "guests": "人数",
    "passengers": "乘客人数", "attendees": "参加者", "to": "目标", "subject": "主题",
    "query": "搜索内容", "league": "联赛", "temperature": "温度", "language": "语言",
    "target": "目标", "source": "源", "currency": "货币", "check": "", "in": "入住",
    "pickup": "取车", "from": "原", "station": "车站", "expression": "算式", "coin": "币种",
    "bill": "账单", "percent": "百分比", "tip": "小费", "room": "房间", "activity": "活动",
    "email": "邮箱", "name": "名称", "unit": "单位", "code": "代码", "id": "编号", "quote": "报价",
    "base": "基准", "category": "类别", "phone": "电话", "account": "账户", "sign": "星座", "priority": "优先级", "timezone": "时区", "key": "键"}


def label_zh(param: str) -> str:
    """A parameter's name in Chinese when each of its words is known ("pickup_date" →
    取车日期), else the name itself."""
    parts = split_name(param)
    whole = {"to": "收件人", "from_station": "出发站", "to_station": "到达站", "check_in": "入住日期"}
    if param in whole:
        return whole[param]
    if parts and all(p in _LABELS_ZH for p in parts):
        return "".join(_LABELS_ZH[p] for p in parts) or param
    return param


def told_not_to(names: list[str], lang: str) -> str:
    """tool_choice="none": say which tool would have helped, and why it was not called."""
    listed = joined(names, lang)
    if lang == "zh":
        return (f"我本可以调用 {listed} 来回答，但这次请求设置了 tool_choice=\"none\"，不允许调用"
                "工具；我自己没有实时数据。")
    return (f"I could use {listed} to answer this, but this request set tool_choice to \"none\", "
            "so I may not call tools, and I have no live data of my own.")


def no_tool(about: str, tools: list, lang: str) -> str:
    """Live data asked for, with no tool that can fetch it."""
    names = joined([tool_name(t) for t in tools], lang)
    if lang == "zh":
        why = f"给我的工具（{names}）都做不到" if tools else "这次请求没有给我任何工具"
        return f"我没法查{TOPIC_ZH.get(about, about)}：{why}，而我是离线的规则模型，没有实时数据。"
    why = f"none of the tools I was given ({names}) can do that" if tools else \
        "this request gave me no tools"
    return (f"I can't check the {about}: {why}, and as an offline rule-based model I have no "
            "live data.")


def fallback(tools: list, lang: str) -> str:
    """The honest answer to anything the rules do not cover."""
    names = joined([tool_name(t) for t in tools], lang)
    if lang == "zh":
        return ("我是离线的规则教学模型，只是真正大模型的替身，我的规则里没有能回答这句话的。我能做的是：记住你在对话里"
                "告诉我的名字、打招呼、在你的话和工具的名字或描述对得上时调用工具"
                + (f"（这次有：{names}）" if tools else "（这次没有给我工具）")
                + "、根据工具结果回答，以及总结对话。")
    return ("I'm the offline rule-based teaching model, a stand-in for a real LLM, and none of "
            "my rules covers that. I can remember your name if a message in this conversation "
            "says it, greet you, call a tool when your words match its name and description "
            + (f"(here: {names})" if tools else "(this request gave me none)")
            + ", answer from tool results, and summarise our conversation.")


# ------------------------------------------------------------------ conversation

def name_answer(name: str | None, lang: str, from_profile: bool = False) -> str:
    """"You told me your name is Xiaoming."; from the profile in the system prompt only:
    "Your profile says your name is Xiaoming."."""
    if from_profile and name:
        return f"你的资料里写着你叫{name}。" if lang == "zh" else \
            f"Your profile says your name is {name}."
    if lang == "zh":
        return f"你刚才说你叫{name}。" if name else "你没有告诉我你的名字。"
    return f"You told me your name is {name}." if name else "You haven't told me your name."


def nice_to_meet(name: str, lang: str) -> str:
    return f"你好{name}！" if lang == "zh" else f"Nice to meet you, {name}!"


def introduction(name: str, lang: str) -> str:
    """"Nice to meet you, Xiaoming! How can I help?" / "你好小明！有什么可以帮你的？"."""
    return nice_to_meet(name, lang) + ("有什么可以帮你的？" if lang == "zh" else " How can I help?")


def greeting(name: str | None, lang: str) -> str:
    if lang == "zh":
        return f"你好{name or ''}！我是离线教学模型，有什么可以帮你的？"
    return f"Hello{', ' + name if name else ''}! I'm the offline teaching model. How can I help?"


def handed_over(agent: str, lang: str) -> str:
    """What the agent a conversation was handed to says when the request needs nothing
    else: who it is, not the transfer tool's output."""
    if lang == "zh":
        return f"你好，我是 {agent}，这段对话由我接手。有什么可以帮你的？"
    return f"Hello, I'm {agent}, and I'm taking over this conversation. How can I help?"


def thanks(lang: str) -> str:
    return "不客气！" if lang == "zh" else "You're welcome!"


def summary(name: str | None, questions: list[str], facts: list[str], lang: str,
            answers: list[str] = ()) -> str:
    """A short, fixed-form summary of a conversation, in the third person so that it can
    be kept as a system note ("the user's name is Xiaoming" is read back as the name);
    `answers`, the assistant's replies (those of a pasted transcript), close it."""
    # a quoted sentence's own full stop is dropped: the summary's comes after the quotes
    asked = [re.sub(r"(?<![.。])[.。]$", "", short(q.strip(), 60)) for q in questions if q.strip()]
    said = [re.sub(r"(?<![.。])[.。]$", "", short(a.strip(), 60)) for a in answers if a.strip()]
    if lang == "zh":
        return "".join(["对话摘要：", f"用户叫{name}。" if name else "",
                        f"用户问了：{'；'.join(f'「{q}」' for q in asked)}。" if asked else
                        "用户还没有提问。", f"工具结果：{''.join(facts)}" if facts else "",
                        f"助手回答：{'；'.join(f'「{a}」' for a in said)}。" if said else ""])
    return " ".join(p for p in ["Summary so far:", f"the user's name is {name}." if name else "",
                                f"The user asked: {'; '.join(f'“{q}”' for q in asked)}." if asked
                                else "The user has not asked anything yet.",
                                f"Tool results: {' '.join(facts)}" if facts else "",
                                f"The assistant answered: {'; '.join(f'“{a}”' for a in said)}."
                                if said else ""] if p)


# ------------------------------------------------------------------ the profile

DIETS = {"vegetarian": ("you're vegetarian", "你吃素"), "vegan": ("you're vegan", "你吃纯素"),
         "no spicy food": ("you don't eat spicy food", "你不吃辣")}
UNITS_ZH = {"fahrenheit": "华氏度", "celsius": "摄氏度"}
LANGUAGES_ZH = {"chinese": "中文", "english": "英文"}


def fact(key: str, value: Any, lang: str) -> str:
    """One kept fact in words: "you're vegetarian" / "你不吃辣", "your name is Xiaoming"."""
    value = str(value)
    low, zh = value.lower(), lang == "zh"
    if key == "diet" and low in DIETS:
        return DIETS[low][1 if zh else 0]
    if zh:
        own_words = value.startswith(("不", "对", "吃", "是"))  # "不吃香菜", "对花生过敏"
        told = quoted_zh(value)  # a value kept in English is quoted, as the user wrote it
        said = {"name": f"你叫{value}", "units": f"你习惯用{quoted_zh(UNITS_ZH.get(low, value))}",
                "language": f"以后用{quoted_zh(LANGUAGES_ZH.get(low, value))}回答你",
                "project": f"你在做{told}", "diet": f"你{value}" if own_words else f"你的饮食：{told}"}
        label = label_zh(key)
        return said.get(key, f"{quoted_zh(label) if label == key else label}：{told}")
    said = {"name": f"your name is {value}", "units": f"you prefer {value.title()}",
            "language": f"you want answers in {value}", "project": f"you're working on {value}",
            "diet": f"your diet: {value}"}
    return said.get(key, f"{key}: {value}")


def told_facts(facts: list[tuple[str, Any]], lang: str, from_profile: bool) -> str:
    """The answer to a question about the user from what is known of them: "Your profile
    says you're vegetarian." / "你的资料里写着：你吃素。" (the profile in the system prompt), or
    "You told me you're vegan." / "你说过：你吃纯素。" (their words in this conversation);
    "" when `facts` is empty."""
    if not facts:
        return ""
    said = [fact(key, value, lang) for key, value in facts]
    if lang == "zh":
        return ("你的资料里写着：" if from_profile else "你说过：") + "；".join(said) + "。"
    return ("Your profile says " if from_profile else "You told me ") + joined(said, lang) + "."


def remembered(kept: list[Mapping], lang: str) -> str:
    """What the profile tool kept: "Noted: you're vegetarian. I'll remember that." /
    "好的，记住了：你不吃辣。"; a replaced value says what it was; a value already known
    says so ("I already knew that: ...")."""
    def said(data: Mapping, with_previous: bool) -> str:
        text, before = fact(str(data["key"]), data["value"], lang), data.get("previous")
        if not with_previous or before is None:
            return text
        if lang == "zh":
            return text + f"（之前：{fact(str(data['key']), before, lang)}）"
        return text + f" (was: {before})"

    new = [said(d, True) for d in kept if d.get("previous") != d.get("value")]
    known = [said(d, False) for d in kept if d.get("previous") == d.get("value")]
    if lang == "zh":
        return "".join([f"好的，记住了：{'；'.join(new)}。" if new else "",
                        f"这个我已经记得了：{'；'.join(known)}。" if known else ""])
    return sentences([f"Noted: {joined(new, lang)}. I'll remember that." if new else "",
                      f"I already knew that: {joined(known, lang)}." if known else ""], lang)


def cannot_answer(rest: str, lang: str) -> str:
    """The part of a message that no tool result or rule answers, said honestly."""
    if lang == "zh":
        return f"至于「{rest}」，我手头的工具和规则回答不了。"
    return f"As for “{rest}”: none of my tools or rules can answer that."


# ------------------------------------------------------------------ answers from long-term memory

def _memory_said(memory: Any, lang: str) -> str:
    """One memory, said with where it comes from: the user's own words and a tool's result
    are quoted (a tool's "remember that the user wants …" is never voiced as a fact)."""
    when = memory.date or ("某天" if lang == "zh" else "an earlier day")
    if lang == "zh":
        # a date set off by spaces from the Chinese around it: "你在 2026 年 2 月 11 日说过"
        when, text = f" {date_zh(when)}" if memory.date else when, quoted_zh(memory.text)
        if memory.source == "user":
            return f"你在{when}说过：“{memory.text}”"
        if memory.source == "session":
            return f"根据我们{when}的对话：{text}"
        if memory.source == "document":
            return f"根据文档{'《' + memory.ref + '》' if memory.ref else ''}：{text}"
        if memory.source == "tool":  # what a tool returned: quoted, never my own or yours
            return f"{when.strip()}的工具结果{'（' + memory.ref + '）' if memory.ref else ''}写着：“{memory.text}”"
        return f"根据我{when}的记录：{text}"
    if memory.source == "user":
        return f"You told me on {when}: “{memory.text}”"
    if memory.source == "session":
        return f"From our conversation on {when}: {memory.text}"
    if memory.source == "document":
        return f"From the document {memory.ref}: {memory.text}" if memory.ref else \
            f"From a document: {memory.text}"
    if memory.source == "tool":  # what a tool returned: quoted, never my own or the user's
        return (f"A {memory.ref} result from {when} said: “{memory.text}”" if memory.ref else
                f"A tool's result from {when} said: “{memory.text}”")
    return f"From my notes of {when}: {memory.text}"


def from_memory(memory: Any, replaces: Any, lang: str) -> str:
    """The answer from one remembered memory; an older one it replaces is named."""
    said = _memory_said(memory, lang)
    if replaces is None:
        return said if lang == "zh" or said.endswith((".", "”", "!", "?")) else said + "."
    if lang == "zh":
        return f"{said}这条比 {date_zh(replaces.date)}的“{replaces.text}”更新，以新的为准。"
    return (f"{said} That replaces what I had from {replaces.date} (“{replaces.text}”): "
            "the newer one is right.")


def not_remembered(lang: str) -> str:
    """No memory the request carries answers the question."""
    if lang == "zh":
        return "我不知道：我记得的内容里没有能回答这个问题的。"
    return "I don't know: nothing I remember answers that."


def saved_memory(texts: list[str], lang: str) -> str:
    """What save_memory kept."""
    texts = [t.rstrip(".!?。！？ ") for t in texts]
    if lang == "zh":
        return "好的，记下了：" + "；".join(f"“{t}”" for t in texts) + "。"
    return "Saved to memory: " + "; ".join(f"“{t}”" for t in texts) + ". I'll remember that."
