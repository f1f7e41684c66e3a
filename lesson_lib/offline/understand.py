"""How the offline teaching model reads a request: plain string rules, nothing learned.

This module turns the user's words into things the brain can act on:

- the language (Chinese if the text has CJK characters, else English);
- the user's name, if a user message said it ("My name is Xiaoming", "我叫小明");
- small intents: a name question, a greeting, thanks, a request to summarise;
- words: English words (lower-case, plural and -ing endings cut), Chinese
  two-character pieces, and *concepts* from a small bilingual synonym table
  (天气 → weather, 几点 → time, warmer → weather, 换算 → convert, ...);
- clauses: "weather in Chengdu and the time in New York" is two requests;
- follow-ups that only name a place or a time zone ("上海呢？", "And UTC?");
- what each tool parameter can take from the text, by its schema: places
  (lesson_lib.places, and capitalised names after "in"), time zones, dates,
  times, numbers by their unit, currencies, codes, e-mail addresses, the ends
  of a route (slots.py), values marked out by their shape or a cue word (spans.py:
  a URL, "owner/name", a file, "labelled X", "from Jake", "X附近"), enum values by
  their synonyms (and which side of "100 °F to Celsius" they are on), an
  arithmetic expression, "5 km to miles", a language, or the free text no other
  parameter took;
- tool results: JSON or plain text, and the numbers in them;
- lasting preferences the user states ("I'm vegetarian", "我不吃辣", "call me Xiaoming",
  "use Fahrenheit", "请用中文回答"), the profile a system message carries ("What you know
  about this user: ..."), and which offered tool keeps such facts (keeper_of).

A rule-based reader is easy to fool; each rule is a few lines so a learner can
read it, break it and fix it. A real model does all of this with one network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lesson_lib.offline import slots, spans
from lesson_lib.places import Place, find_places, lookup

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


# ------------------------------------------------------------------ text and language

def text_of(message: Any) -> str:
    """The text of a message: its content string, or its text parts joined; "" otherwise."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content
                 if isinstance(p, (str, Mapping))]
        return " ".join(p for p in parts if isinstance(p, str) and p)
    return ""


def language(text: str) -> str:
    """"zh" when the text has Chinese characters, else "en"."""
    return "zh" if CJK.search(text or "") else "en"


def tidy(text: str) -> str:
    """Curly quotes straightened, so one set of patterns reads both."""
    return (text or "").replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')


# ------------------------------------------------------------------ names

_WORD, _NEXT = r"[A-Za-z][\w'-]*", r"(?:\s+[A-Z][\w'-]*)?"  # a name, maybe a second part
_NAME_EN = (re.compile(rf"\b(?i:my name is|call me)\s+({_WORD}{_NEXT})"),
            # capitalised after "I'm": "I'm Xiaoming" is a name, "I'm fine" is not
            re.compile(rf"\b(?i:i'm|i am|im)\s+([A-Z][\w'-]*{_NEXT})"))
# "叫我小明" ("call me Xiaoming") only at the start of a clause: "他叫我去" is not a name
_NAME_ZH = re.compile(r"(?:我的名字是|我的名字叫|(?<![帮让给替])我叫|我是|(?:^|(?<=[\s，,。！!？?请就后都以]))叫我)\s*"
                      r"([A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,4})")
_NAME_ZH_END = re.compile(r"[你呢吗啊吧呀了的在想要来是今从，。！？,.!?]")
_NOT_NAMES = {"fine", "good", "ok", "okay", "here", "back", "sorry", "not", "so", "just", "going",
              "a", "an", "the", "from", "in", "at", "on", "new", "ready", "sure", "glad", "tired",
              "chinese", "english", "american", "learning", "trying", "looking", "what", "who",
              "is", "your", "and", "how", "can", "could", "please", "i", "nice", "hi", "hello",
              "tell", "do", "what's", "it", "vegetarian", "vegan"}
_NOT_NAMES_ZH = ("什么", "谁", "啥", "哪", "多少", "学生", "老师", "新手", "一", "个", "说", "不",
                 "素", "吃", "纯素", "严格",  # "我是素食者" is a diet, not a name
                 "中国", "程序员", "开发")


@lru_cache(maxsize=4096)  # a pure function of the text: each request reads it again
def name_in(text: str) -> str | None:
    """The name a user gives in `text` ("My name is Xiaoming", "我叫小明"), or None."""
    text = tidy(text)
    for pattern in _NAME_EN:
        for found in pattern.finditer(text):
            parts = [w for w in found.group(1).split() if w.lower() not in _NOT_NAMES]
            if parts and parts[0] == found.group(1).split()[0]:
                return " ".join(parts).removesuffix("'s")
    for found in _NAME_ZH.finditer(text):
        name = _NAME_ZH_END.split(found.group(1))[0]
        if name and not name.startswith(_NOT_NAMES_ZH):
            return name
    return None


_NAME_NOTE = re.compile(r"(?i)\bthe user'?s name is\s+([A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,4})"
                        r"|(?:用户叫|用户的名字是|用户的名字叫)\s*([A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,4})")


def name_noted(text: str) -> str | None:
    """A name a system note states in the third person ("the user's name is Xiaoming",
    "用户叫小明"), as a memory summary does. "Your name is ..." in a system prompt names
    the assistant, so it does not count."""
    found = _NAME_NOTE.search(tidy(text))
    name = (found.group(1) or found.group(2)) if found else None
    if name and not name[0].isascii():  # a Chinese name ends where a particle begins
        name = _NAME_ZH_END.split(name)[0]
    return name.removesuffix(".") if name else None


def user_name(messages: list) -> str | None:
    """The latest name the messages give the user: a user message saying it, or a system
    note (a summary of older messages) stating it. The model has no other memory."""
    name = None
    for m in messages:
        role = m.get("role") if isinstance(m, Mapping) else None
        if role == "user":
            name = name_in(text_of(m)) or name
        elif role in ("system", "developer"):
            name = name_noted(text_of(m)) or name
    return name


def without_introduction(text: str) -> str:
    """`text` with "My name is X" / "我叫X" / a leading "Hi" removed (they need no tool)."""
    text = tidy(text)
    name = name_in(text)
    if name:
        text = re.sub(r"(?i)(my name is|call me|i'm|i am|我的名字是|我的名字叫|我叫|我是|叫我)\s*"
                      + re.escape(name), " ", text)
    return re.sub(r"^\s*(?i:hi|hello|hey|你好|您好|嗨)\b[\s,!，！。.]*", "", text)


# ------------------------------------------------------------------ small intents

_ASKS_NAME = re.compile(
    r"(?i)\b(what'?s|what is|do you (remember|know)|tell me|remind me of)\b[^.?!]*\bmy name\b"
    r"|\bwho am i\b|我叫什么|我叫啥|我的名字是什么|我的名字叫什么|记得我的名字|记得我叫|知道我的名字"
    r"|知道我叫|我是谁")
_GREETING = re.compile(r"(?i)^\s*(hi|hello|hey|good (morning|afternoon|evening)|greetings)\b"
                       r"|^\s*(你好|您好|嗨|哈喽|早上好|下午好|晚上好|又见面了)")
_THANKS = re.compile(r"(?i)\b(thanks|thank you|thx|cheers)\b|谢谢|多谢|感谢")
_SUMMARY = re.compile(r"(?i)\b(summari[sz]e|summary|recap|sum up)\b|总结|概括|归纳|回顾|摘要")
_CONVERSATION = re.compile(r"(?i)\b(conversation|chat|dialog(ue)?|so far|discussed|talked|"
                           r"we said|our)\b|对话|聊天|聊了|说了|谈了|刚才|目前|以上|我们")


def asks_name(text: str) -> bool:
    """"What's my name?", "Do you remember my name?", "我叫什么名字？"."""
    return bool(_ASKS_NAME.search(tidy(text)))


def is_greeting(text: str) -> bool:
    return bool(_GREETING.search(text or ""))


def is_thanks(text: str) -> bool:
    return bool(_THANKS.search(text or ""))


def asks_summary(text: str) -> bool:
    """"Summarize the conversation so far", "总结一下我们的对话"."""
    return bool(_SUMMARY.search(text or "")) and bool(_CONVERSATION.search(text or ""))


# ------------------------------------------------------------------ words and concepts

# Each concept gathers English words (compared after cutting endings) and Chinese
# pieces (found anywhere). A request and a tool "share" a concept when both use
# one of its words, which lets "成都天气" reach a tool described in English.
CONCEPTS: dict[str, str] = {
    "weather": "weather temperature warm warmer hot hotter cold colder cooler rain rainy "
               "sunny snow cloudy foggy humidity forecast umbrella wear climate degree celsius "
               "fahrenheit 天气 气温 温度 多少度 几度 华氏 摄氏 "
               "下雨 下雪 晴 阴天 多云 暖和 凉快 冷 炎热 很热 更热 多热 热吗 热不热 穿什么 带伞 "
               "雨伞 气候 预报 湿度",
    "time": "time clock date timezone hour 时间 几点 时区 日期 几号 星期几 点钟 钟表",
    "news": "news headline article 新闻 头条 资讯",
    "search": "search find lookup 搜索 查找 搜一下 搜搜",
    "calculate": "calculate calculator compute evaluate arithmetic math expression 计算 算一下 "
                 "算算 等于多少 算式 表达式",
    "convert": "convert conversion 换算 转换 换成 转成",
    "translate": "translate translated translation 翻译 怎么说 译成 翻成",
    "exchange": "exchange currency money dollar euro yen 汇率 货币 兑换 美元 美金 人民币 欧元 日元 "
                "英镑 港币 换多少",
    # Everyday topics of the tools learners write, so that a request in Chinese finds a
    # tool described in English ("股价" → get_stock_price) and the reverse.
    "flight": "flight fly airline airport plane 航班 机票 飞机 起飞 飞往 值机",
    "stock": "stock share ticker 股价 股票 股市 股 买入 卖出 限价 市价",
    "calendar": "calendar event appointment 日历 日程 行程",
    "travel": "travel guide itinerary sightseeing 旅游 旅行攻略 攻略 景点 游玩 玩什么",
    "email": "email mail 邮件 邮箱 发信",
    "note": "note memo 笔记 备忘 记一下 记下",
    "restaurant": "restaurant dining cuisine 餐厅 饭店 饭馆 料理 美食",
    "directions": "direction route navigate navigation 怎么走 路线 导航 怎么去",
    "sport": "score match game team 比分 比赛 球队",
    "recipe": "recipe cook dish 菜谱 食谱 怎么做 做法 配方 人份",
    "timer": "timer countdown 计时器 倒计时 定时器",
    "hotel": "hotel 酒店 宾馆 入住 住宿",
    "package": "package parcel tracking delivery courier pickup 快递 包裹 物流 取件 上门取件 揽件",
    "shop": "shop shopping product buy 商品 购物 网购 购买 买一 找一款",
    "list": "list checklist 清单 列表",
    "inventory": "stock inventory available availability 有货 库存 缺货 现货",
    "reminder": "remind reminder alert 提醒",
    "population": "population inhabitant 人口",
    "define": "define definition meaning mean 意思 定义 含义 释义",
    "tip": "tip gratuity 小费",
    "music": "music song playlist 音乐 歌曲 播放 歌单 播放列表",
    "meeting": "meeting 会议 开会",
    "train": "train railway 火车 高铁 动车 列车",
    "workout": "workout exercise log 运动 锻炼 健身 记录",
    "calorie": "calorie nutrition 卡路里 热量 营养",
    "sun": "sunrise sunset 日出 日落",
    "language": "language 语言 语种",
    "crypto": "crypto cryptocurrency coin bitcoin 比特币 以太坊",
    "car": "car rent rental 租车",
    "todo": "todo task 待办 任务",
    "complete": "complete done finish finished tick 完成 做完 勾掉 已完成",
    "assign": "assign delegate 分配 指派 交给",
    "movie": "movie film cinema showtime 电影 场次 影院 影城 电影票",
    "league": "league standing 积分榜 联赛 排名",
    "job": "job career hiring 工作 职位 招聘",
    "thermostat": "thermostat heating 空调 暖气 调到",
    "air": "air pollution aqi 空气 雾霾 污染",
    # A small bilingual glossary of everyday things tools are about (one idea a line).
    "bus": "bus 公交 公交车 巴士", "tide": "tide 潮汐 涨潮 退潮", "shoe": "shoe 鞋 鞋码",
    "size": "size 尺码 尺寸 码数", "table": "table 桌子 餐桌 订桌 订座 位子 座位",
    "booking": "book booking reserve reservation 预订 预约 订座 订位 报名 约一节 约个课", "holiday": "holiday 节假日 假期 假日 节日",
    "garden": "garden yard lawn plant sprinkler 花园 院子 浇水 植物 草坪",
    "invoice": "invoice 发票 开票", "client": "client customer 客户",
    "podcast": "podcast 播客", "parking": "parking park 停车 停车场 车位",
    "order": "order delivery takeaway takeout 点餐 外卖 下单 订餐 下个单",
    "medicine": "medicine pill medication prescription refill 药 吃药 处方 续药 续开 续配",
    "doctor": "doctor hospital clinic 医生 医院 挂号",
    "school": "school homework class lesson 学校 作业 课程 课", "library": "library 图书馆",
    "book": "novel ebook 书 书籍 小说", "price": "price cost 价格 多少钱",
    "map": "map 地图", "distance": "distance 距离 多远", "battery": "battery 电量 电池",
    "light": "light lamp 灯 台灯 开灯 关灯", "door": "door lock 门 门锁 锁门 锁上 解锁 上锁",
    "alarm": "alarm wake 闹钟 叫醒 起床", "video": "video 视频", "photo": "photo picture 照片 图片",
    "message": "sms text 短信 消息 发一条", "phone": "phone call dial 电话 打电话",
    "contact": "contact 联系人 通讯录", "bank": "bank balance account 银行 余额 账户",
    "payment": "pay payment transfer 支付 付款 转账 收款 收钱", "bill": "bill 账单 缴费",
    "split": "split divide share aa 平摊 分摊 平分 均摊 人分",
    "tax": "tax 税 个税", "salary": "salary wage 工资 薪水", "insurance": "insurance 保险",
    "loan": "loan mortgage 贷款 房贷 月供 商贷", "rate": "rate interest 利率 利息",
    "pharmacy": "pharmacy drugstore 药店", "fuel": "fuel gas petrol 油价 加油",
    "electricity": "electricity power 电费 用电", "ticket": "ticket seat 票 门票 车票",
    "concert": "concert show 演唱会 音乐会 演出", "museum": "museum 博物馆",
    "zoo": "zoo 动物园", "beach": "beach coast 海滩 海边", "camping": "camping camp 露营",
    "ski": "ski skiing 滑雪", "gym": "gym fitness 健身房", "sleep": "sleep 睡眠 睡觉",
    "weight": "weight 体重", "step": "step pedometer 步数", "heart": "heart pulse 心率",
    "taxi": "taxi cab ride car 出租车 打车 叫车 叫个车 叫辆车 叫一辆 用车", "subway": "subway metro 地铁",
    "ferry": "ferry boat 轮渡 渡轮", "visa": "visa passport 签证 护照",
    "luggage": "luggage baggage 行李", "tv": "tv television channel 电视 频道",
    "game": "videogame gaming 游戏", "lottery": "lottery 彩票",
    "horoscope": "horoscope zodiac 星座 运势",
    "coffee": "coffee cafe 咖啡 咖啡店 咖啡馆", "latte": "latte 拿铁", "americano": "americano 美式",
    "cappuccino": "cappuccino 卡布奇诺", "mocha": "mocha 摩卡",
    "tea": "tea 茶", "grocery": "grocery supermarket 超市 杂货 买菜",
    "coupon": "coupon discount deal 优惠券 折扣 打折", "refund": "refund return 退款 退货",
    "review": "review rating 评价 评分 点评", "earthquake": "earthquake 地震",
    "traffic": "traffic congestion 交通 路况 堵车", "pet": "pet dog cat 宠物 狗 猫",
    "birthday": "birthday 生日", "gift": "gift present 礼物 礼品卡", "flower": "flower 花 鲜花",
    "dictionary": "dictionary synonym 词典 字典 同义词", "file": "file document folder 文件 文档 文件夹",
    "rename": "rename 重命名 改名",
    "password": "password 密码", "printer": "printer print 打印 打印机",
    "volume": "volume 音量", "fan": "fan 风扇", "appliance": "fridge oven washer 冰箱 烤箱 洗衣机",
    "clothes": "clothes clothing shirt 衣服 衬衫",
    "expense": "expense spend spent spending 花了 花费 支出 开销 记账",
    "playlist": "playlist 歌单", "repository": "repository repo github git 仓库 代码库",
    "branch": "branch 分支", "pull": "pull pr 合并请求", "issue": "issue bug 缺陷",
    "support": "support helpdesk 客服 工单", "nearby": "near nearby around 附近 周边 周围",
    "focus": "focus concentrate 专注 专心", "block": "block 屏蔽 锁定 留出 空出", "disturb": "disturb silence mute dnd 勿扰 免打扰 静音",
    "poll": "poll vote survey 投票", "deploy": "deploy release rollout 部署 发布 上线",
    "link": "url link shorten 链接 网址 短链 短链接 缩短", "water": "water hydration 喝水 饮水 喝了",
    "vacuum": "vacuum clean cleaning mop 扫地 打扫 清扫 拖地 扫地机 扫一下",
    "summarize": "summarize summarise summary 总结 概括 摘要", "bmi": "bmi 体质指数",
    "version": "version 版本", "time zone": "zone timezone 时区 北京时间",
}
LIVE_DATA = ("weather", "time", "news", "exchange")  # things only a tool can know
TOPIC_ZH = {"weather": "天气", "time": "时间", "news": "新闻", "search": "搜索结果",
            "calculate": "计算结果", "convert": "换算结果", "translate": "翻译",
            "exchange": "汇率"}

_STOP = set("""a an the is are was be been am do does did can could would should will please
tell show give let know want need like to of in on at for from by with about and or but if
then than so as this that these those there here now right today currently current get use
user ask when where what which who how why some any all just also it its me my you your we our
they them keep until till somewhere something give given provide optional default name value
type string number e g eg example such whether one idea good check latest recent any""".split())
_STOP_ZH = {"用户", "使用", "工具", "可以", "什么", "一下", "帮我", "现在", "怎么", "多少", "请问",
            "告诉", "这个", "那个", "我们", "你们", "的时", "时使", "此工", "询问"}


_UNSTEMMED = {"news", "series", "physics", "celsius", "gas", "bus", "yes", "this", "its", "has",
              "was", "does"}


_IE_PLURALS = {"movies", "calories", "cookies", "brownies", "smoothies", "selfies", "zombies",
               "rookies", "pies", "ties", "lies", "goalies", "aunties", "hippies"}


def stem(word: str) -> str:
    """A crude English stem: "cities" → "city", "raining" → "rain", "planning" → "plan"."""
    if word in _UNSTEMMED:
        return word
    if word in _IE_PLURALS:
        return word[:-1]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
        return word[:-1] if len(word) > 2 and word[-1] == word[-2] else word
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=4096)
def split_name(name: str) -> tuple[str, ...]:
    """"get_current_weather" / "getCurrentWeather" → ("get", "current", "weather").
    (Cached: the same tool and parameter names come back on every request.)"""
    spaced = _CAMEL.sub(r"\1 \2", name or "")
    return tuple(w.lower() for w in _NOT_ALNUM.split(spaced) if w)


def english_words(text: str) -> set[str]:
    return set(_english_words(text or ""))


@lru_cache(maxsize=4096)
def _english_words(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 1)


def chinese_pieces(text: str) -> set[str]:
    """Two-character pieces of every Chinese run: "成都天气" → 成都, 都天, 天气."""
    pieces = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", text or ""):
        pieces |= {run[k:k + 2] for k in range(len(run) - 1)}
    return pieces - _STOP_ZH


def _concept_table() -> list[tuple[str, set[str], list[str]]]:
    """CONCEPTS read once: (concept, its English stems, its Chinese words)."""
    return [(concept, {stem(w) for w in words.split() if not CJK.search(w)},
             [w for w in words.split() if CJK.search(w)]) for concept, words in CONCEPTS.items()]


_CONCEPT_TABLE = _concept_table()
CONCEPT_OF = {w: concept for concept, english, _ in reversed(_CONCEPT_TABLE) for w in english}


# "火车几点开？" / "What time does my train leave?" ask about a schedule (the user's own, or
# a timetable), not about the time now: their 几点 / "what time" is not the time concept.
_SCHEDULE = re.compile(r"几点(?=(?:开|出发|发车|到|抵达|起飞|降落|走|集合|见面|上课|开始|结束))|"
                       r"(?i:\bwhat time(?= (?:does|do|did|will|should)\b))")


def concepts(text: str) -> set[str]:
    """The concepts of CONCEPTS that `text` mentions."""
    text = _SCHEDULE.sub(" ", text or "")
    english = english_words(text)
    return {concept for concept, stems, chinese in _CONCEPT_TABLE
            if not stems.isdisjoint(english) or any(w in text for w in chinese)}


@lru_cache(maxsize=2048)
def words(text: str) -> frozenset[str]:
    """Everything a tool can be matched on: English stems, Chinese pieces, concepts.
    (Cached: a request is scored against every tool, and the same tools come back on
    every request.)"""
    text = _SCHEDULE.sub(" ", text or "")
    return frozenset((english_words(text) - _STOP) | chinese_pieces(text) | concepts(text))


# ------------------------------------------------------------------ places and time zones

@dataclass(frozen=True)
class Target:
    """One thing a call is about: a place value as it will be sent, and its time zone."""
    value: str
    timezone: str | None = None


def place_value(place: Place, text: str) -> str:
    """How to write `place` in a call: its Chinese name when the user typed it in Chinese
    (the seed tools accept 成都 and Chengdu alike), else its canonical English name."""
    typed_in_chinese = place.zh in text or any(CJK.search(a) and a in text for a in place.aliases)
    return place.zh if typed_in_chinese else place.name


def targets_in(text: str) -> list[Target]:
    """The places named in `text`, in order, each with its IANA time zone."""
    return [Target(place_value(p, text), p.timezone) for p in find_places(text)]


def all_targets_in(text: str, avoid: set[str]) -> list[Target]:
    """The places named in `text`, in order: the gazetteer's, and capitalised names it does
    not know said where a place goes ("weather in Oslo and Rome" → Oslo, Rome; no time
    zone for Oslo). Words in `avoid` (units, enum values) are not places."""
    known = [(text.lower().find(p.name.lower()) if p.name.lower() in text.lower() else
              min((text.find(k) for k in (p.zh, *p.aliases) if k in text), default=len(text)),
              Target(place_value(p, text), p.timezone)) for p in find_places(text)]
    unknown = [(at, Target(name)) for at, name in slots.places_said(tidy(text), avoid)
               if lookup(name) is None and not find_places(name)]
    return [t for _, t in sorted(known + unknown, key=lambda pair: pair[0])]


_IANA = re.compile(r"(?<![A-Za-z0-9_/])([A-Z][A-Za-z_]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?"
                   r"|UTC|GMT)(?![A-Za-z0-9_/])")  # "UTC时间" too: Chinese has no spaces


def iana_zone(text: str) -> str | None:
    """An IANA time zone written out in `text` ("Europe/Paris", "Mars/Base", "UTC")."""
    found = _IANA.search(text or "")
    return found.group(1) if found else None


_FOLLOW_WORDS = re.compile(r"(?i)\b(?:and|what|how|about|of|then|in|for|at|the|please|now|today|"
                           r"right|city|same|also|too)\b|那么|那边|那里|那|呢|的|还有|和|也|今天|现在|"
                           r"请|吗|怎么样|如何|又|查一下|查查")


def follows_up(text: str) -> bool:
    """"And Shanghai?", "What about Tokyo?", "上海呢？", "And in UTC?": a short message that
    names a place or a time zone and nothing else, asking the same question about it."""
    if len(text or "") > 60 or not (find_places(text) or iana_zone(text)):
        return False
    rest = _FOLLOW_WORDS.sub(" ", without_places(_IANA.sub(" ", text)))
    return not re.sub(r"[\W_]+", "", rest)


def zone_target(text: str) -> Target | None:
    """An IANA zone written out in `text` as a target ("the time in UTC" is about UTC)."""
    zone = iana_zone(text)
    return Target(zone, zone) if zone else None


_UNKNOWN_PLACE_EN = re.compile(r"\b(?:in|at|for)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)(?![\w/])")
_FILLER_ZH = re.compile(r"帮我|请|我想|我要|想要|需要|能不能|可以|我们|我|你|想|要|去|在|查一下|查查|查|看看|一下|今天|明天|后天|现在|的|了|吗|呢|怎么样|如何|那里|"
                        r"那边|未来|最近|这几天|这周|本周|下周|周末|早上|晚上|上午|下午|今晚|有|会|"
                        r"[一二三四五六七八九十两几\d]+(?:天|周|个月|个小时|小时|星期)")


def unknown_place(text: str, avoid: set[str], topics: tuple[str, ...] = ()) -> str | None:
    """A place the gazetteer does not know: "weather in Lhasa" → "Lhasa",
    "拉萨天气" → "拉萨" (the Chinese words before the first topic word: weather, time,
    news, or one of `topics`, the tool's own Chinese words: "智利有地震吗")."""
    for found in _UNKNOWN_PLACE_EN.finditer(text):
        if found.group(1).lower() not in avoid:
            return found.group(1)
    words_ = "|".join(["天气", "气温", "温度", "时间", "几点", "新闻",
                       *sorted(map(re.escape, topics), key=len, reverse=True)])
    topic = re.search(words_, text)
    before = _FILLER_ZH.sub("", text[:topic.start()]) if topic else ""
    if concepts(before):  # "日出时间": what the time is of, not where
        return None
    return before if 2 <= len(before) <= 6 and CJK.fullmatch(before[0]) else None


# ------------------------------------------------------------------ numbers and expressions

_MATH_WORDS = ((r"\bplus\b|加上|加", "+"), (r"\bminus\b|减去|减", "-"),
               (r"\btimes\b|\bmultiplied by\b|乘以|乘", "*"), (r"\bdivided by\b|除以", "/"),
               ("×", "*"), ("÷", "/"))
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4,
                 "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


@lru_cache(maxsize=4096)  # a pure function of the text: each request reads it again
def math_symbols(text: str) -> str:
    """Operator words between numbers become symbols: "23 times 7" → "23 * 7", "2加3" → "2+3"."""
    for words_, symbol in _MATH_WORDS:
        text = re.sub(rf"(?<=\d)\s*(?:{words_})\s*(?=[\d(])", f" {symbol} ", text)
    return text


_NUMBER = r"-?\d+(?:\.\d+)?"
_EXPRESSION = re.compile(rf"(?:\(\s*)*{_NUMBER}(?:\s*\))*"
                         rf"(?:\s*[-+*/^%]\s*(?:\(\s*)*{_NUMBER}(?:\s*\))*)+")


def expression_in(text: str) -> str | None:
    """The arithmetic in `text`: "What is 23 * 7 + 1?" → "23 * 7 + 1"."""
    found = _EXPRESSION.search(math_symbols(text))
    return re.sub(r"\s+", " ", found.group(0)).strip() if found else None


_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
# A Chinese numeral counts something when a measure word follows it: 三天, 两个人, 十五岁
# (not 一起, 周一, 统一).
_CN_COUNT = re.compile(r"(?<![第周])([零一二两三四五六七八九十]{1,3})(?=个|条|篇|则|项|天|晚|夜|人|位|张|次|本|岁"
                       r"|件|杯|份|间|辆|只|家|周|星期|年|小时|分钟|公里|元|块)")


def chinese_number(numeral: str) -> int | None:
    """"三" → 3, "十五" → 15, "二十" → 20, "三十五" → 35, "两" → 2; None for anything else."""
    if numeral in _CN_DIGITS:
        return _CN_DIGITS[numeral]
    tens, ten, ones = numeral.partition("十")
    if not ten or (tens and tens not in _CN_DIGITS) or (ones and ones not in _CN_DIGITS):
        return None
    return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)


def numbers_in(text: str) -> list[float]:
    """Numbers in order: digits ("5", "2.5"), small number words ("three") and Chinese
    numerals that count something ("三天", "十五个")."""
    found = [(m.start(), float(m.group())) for m in re.finditer(r"-?\d+(?:\.\d+)?", text)]
    for word, value in _NUMBER_WORDS.items():
        if word.isascii():
            found += [(m.start(), float(value)) for m in re.finditer(rf"\b{word}\b", text.lower())]
    for m in _CN_COUNT.finditer(text):
        value = chinese_number(m.group(1))
        if value is not None:
            found.append((m.start(), float(value)))
    return [value for _, value in sorted(found)]


_CONVERSION = (re.compile(r"(?i)\d+(?:\.\d+)?\s*([A-Za-z°$€£¥]+)\s+(?:to|into|in)\s+"
                         r"([A-Za-z°$€£¥]+)"),
               re.compile(r"(?i)\bfrom\s+([A-Za-z°]+)\s+to\s+([A-Za-z°]+)"),
               re.compile(r"\d+(?:\.\d+)?\s*([^\d\s]+?)\s*(?:换算成|转换成|转换为|换成|转成|等于多少|是多少)"
                          r"\s*([\u4e00-\u9fffA-Za-z°]+)"))


def conversion_in(text: str) -> tuple[str, str] | None:
    """("km", "miles") from "convert 5 km to miles"; ("公里", "英里") from "5公里换算成英里"."""
    for pattern in _CONVERSION:
        found = pattern.search(text or "")
        if found:
            return found.group(1), found.group(2).rstrip("?？。.!")
    return None


_LANGUAGES = {"english": "English", "chinese": "Chinese", "french": "French",
              "japanese": "Japanese", "german": "German", "spanish": "Spanish",
              "korean": "Korean", "russian": "Russian", "英文": "English", "英语": "English",
              "中文": "Chinese", "汉语": "Chinese", "法语": "French", "日语": "Japanese",
              "德语": "German", "西班牙语": "Spanish", "韩语": "Korean", "俄语": "Russian"}


def languages_in(text: str) -> list[str]:
    """Languages named in `text`, in order, as English names."""
    lowered = (text or "").lower()
    found = [(m.start(), name) for key, name in _LANGUAGES.items()
             for m in re.finditer(re.escape(key) if CJK.search(key) else rf"\b{key}\b", lowered)]
    return [name for _, name in sorted(found)]


def quoted_in(text: str) -> str | None:
    """The first quoted piece: 'good morning', "hello", 「你好」."""
    found = re.search(r"\"([^\"]+)\"|(?:^|(?<=\s))'([^']+)'(?=$|[\s,.?!])|「([^」]+)」|《([^》]+)》",
                      tidy(text))
    return next((g for g in found.groups() if g), None) if found else None


# ------------------------------------------------------------------ weather words

# (English key, Chinese words, English words or phrases), most specific first: "partly
# cloudy" must be found before "cloudy". The first Chinese word is the one answers use.
CONDITIONS = (
    ("thunderstorm", "雷阵雨 雷雨", "thunderstorm, thunder"),
    ("partly cloudy", "局部多云 少云", "partly cloudy"),
    ("light rain", "小雨", "light rain, drizzle"),
    ("heavy rain", "大雨 暴雨", "heavy rain"),
    ("showers", "阵雨", "showers, shower"),
    ("rain", "有雨 下雨 雨", "rain, rainy, raining"),
    ("snow", "有雪 下雪 雪", "snow, snowy, snowing"),
    ("sunny", "晴 晴天 晴朗", "sunny, clear, sunshine"),
    ("cloudy", "多云", "cloudy, clouds"),
    ("overcast", "阴 阴天", "overcast"),
    ("foggy", "有雾 雾", "foggy, fog, mist"),
    ("windy", "有风 大风", "windy"),
)
WINDS_ZH = {"light breeze": "微风", "gentle breeze": "微风", "moderate breeze": "和风",
            "fresh breeze": "清风", "strong breeze": "强风", "strong wind": "大风", "calm": "无风"}


def condition_of(text: str) -> str | None:
    """The weather condition `text` names, as an English key: "晴天" → "sunny"."""
    lowered = (text or "").lower()
    for key, chinese, english in CONDITIONS:
        if any(w in lowered for w in chinese.split()) or any(
                re.search(rf"\b{re.escape(w.strip())}\b", lowered) for w in english.split(",")):
            return key
    return None


def condition_zh(condition: str) -> str:
    """"cloudy" → "多云"; a condition the table does not know stays as it is."""
    key = condition_of(condition)
    return next((zh.split()[0] for k, zh, _ in CONDITIONS if k == key), condition)


def condition_en(condition: str) -> str:
    """"多云" → "cloudy"; English conditions stay as they are."""
    return condition_of(condition) or condition if CJK.search(condition) else condition


# ------------------------------------------------------------------ how a request is put

@dataclass(frozen=True)
class Comparison:
    """"Which is warmer?": the word, a hint for the result field, and which end wins."""
    word: str
    field: str      # part of the result key to compare ("temp"), "" for the first number
    highest: bool   # True: the largest value wins ("warmer"), False: the smallest ("colder")


_COMPARATIVES = (("warmer", "temp", True), ("hotter", "temp", True), ("colder", "temp", False),
                 ("cooler", "temp", False), ("更暖和", "temp", True), ("更暖", "temp", True),
                 ("更热", "temp", True), ("更冷", "temp", False), ("更凉快", "temp", False),
                 ("更凉", "temp", False), ("higher", "", True), ("bigger", "", True),
                 ("larger", "", True), ("more", "", True), ("lower", "", False),
                 ("smaller", "", False), ("less", "", False), ("cheaper", "", False),
                 ("更高", "", True), ("更大", "", True), ("更多", "", True), ("更贵", "", True),
                 ("更低", "", False), ("更小", "", False), ("更少", "", False), ("更便宜", "", False))
_CHOOSING = re.compile(r"(?i)\b(which|where|or|than|compare)\b|哪|还是|比较|相比|比")


def comparison_in(text: str) -> Comparison | None:
    """A "which is warmer, A or B?" question in `text`, or None."""
    if not _CHOOSING.search(text or ""):
        return None
    lowered = text.lower()
    for word, hint, highest in _COMPARATIVES:
        if re.search(rf"\b{word}\b" if word.isascii() else word, lowered):
            return Comparison(word, hint, highest)
    return None


_BACK = re.compile(r"(?i)\b(there|that city|that place|the same place)\b|那里|那边|那儿|当地|那个城市|那座城市")


def refers_back(text: str) -> bool:
    """True when `text` points at a place named earlier: "what time is it there?"."""
    return bool(_BACK.search(text or ""))


_UNTIL = re.compile(r"(?i)\b(?:until|till)\s+(?:it\s+(?:is|gets|turns|becomes)\s+|it's\s+)?"
                    r"([^,.;!?]+)|直到([^，。！？,.!?]+)")


def until_in(text: str) -> str | None:
    """The wanted condition of "keep checking ... until it is sunny" / "直到晴天为止"."""
    found = _UNTIL.search(tidy(text))
    return condition_of(found.group(1) or found.group(2)) if found else None


_SENTENCES = re.compile(r"[?？!！。;；\n]+|(?<!\d)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bSt)(?<!\bProf)"
                        r"\.(?![\dA-Za-z_])")
_JOINERS = re.compile(r"(?i)(?<!\d),|,(?!\d)|\s+(?:and|also|then)\s+|，|、|另外|还有|以及|并且|"
                      r"同时|然后|(?<![暖温柔平缓])和(?![平谐])")
_QUOTED = re.compile(r"\"[^\"]*\"|(?:^|(?<=\s))'[^']+'(?=$|[\s,.?!])|「[^」]*」|《[^》]*》|(?<!\d):(?!\d).*$|：.*$")


def segments(text: str) -> list[str]:
    """`text` cut at sentence ends and at "and" / "，" / "和": the pieces a clause is made of."""
    return [piece for _, piece in joined_segments(text)]


def joined_segments(text: str) -> list[tuple[str, str]]:
    """The pieces of segments(), each with the words that joined it to the one before
    (" and ", "，", "? "). Nothing inside quotes, or after a colon ("Save a note: milk
    and eggs"), is cut."""
    text = math_symbols(tidy(text))
    keep = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    cuts = [(m.start(), m.end()) for pattern in (_SENTENCES, _JOINERS) for m in pattern.finditer(text)
            if not any(a <= m.start() < b for a, b in keep)]
    pieces, at, joiner = [], 0, ""
    for start, end in sorted(set(cuts)):
        if start < at:
            continue
        if text[at:start].strip():
            pieces.append((joiner, text[at:start].strip()))
            joiner = ""
        joiner += text[start:end]
        at = end
    if text[at:].strip():
        pieces.append((joiner, text[at:].strip()))
    return pieces


# ------------------------------------------------------------------ tools and their words

def function_of(tool: Any) -> Mapping:
    fn = tool.get("function") if isinstance(tool, Mapping) else None
    return fn if isinstance(fn, Mapping) else {}


def tool_name(tool: Any) -> str:
    return str(function_of(tool).get("name") or "")


def properties(tool: Any) -> dict:
    """The tool's parameters as {name: schema}; {} for a tool without any."""
    params = function_of(tool).get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    return {k: v if isinstance(v, Mapping) else {} for k, v in props.items()} \
        if isinstance(props, Mapping) else {}


def required(tool: Any) -> list[str]:
    params = function_of(tool).get("parameters")
    names = params.get("required") if isinstance(params, Mapping) else None
    return [n for n in names if n in properties(tool)] if isinstance(names, list) else []


def tool_text(tool: Any) -> str:
    """All the words a tool offers: description, parameter names, descriptions, enum values."""
    parts = [str(function_of(tool).get("description") or "")]
    for name, schema in properties(tool).items():
        parts += [" ".join(split_name(name)), str(schema.get("description") or "")]
        parts += [str(v) for v in schema.get("enum") or [] if isinstance(v, (str, int, float))]
    return " ".join(parts)


@lru_cache(maxsize=4096)  # a pure function of the text: each request reads it again
def without_places(text: str) -> str:
    """`text` with place names blanked: "Shanghai" must not pull in a tool whose
    description happens to say "e.g. Asia/Shanghai"."""
    for place in find_places(text):
        for key in (place.name, place.zh, *place.aliases):
            text = re.sub(re.escape(key), " ", text, flags=re.I)
    return text


def score(tool: Any, text: str) -> int:
    """How well `tool` fits `text`: 3 per idea shared with the tool's name, 1 per shared
    word elsewhere in it, plus points when the text holds what its parameters take.
    A name word and its concept are one idea: "convert_temperature" matches "temperature"
    once, not twice (as "temperature" and as "weather"). A converter gets 2 more for a
    number with a unit and no place, if it shares a word or unit with the text: "16 °C in
    Fahrenheit" is a conversion, "the weather in Chengdu in Fahrenheit" is not."""
    name_words = words(" ".join(split_name(tool_name(tool))))
    shared = words(without_places(text)) & (name_words | words(tool_text(tool)))
    in_name = {CONCEPT_OF.get(w, w) for w in shared & name_words}
    points = 3 * len(in_name) + len(shared - name_words) + argument_points(tool, text)
    if quantity_in(text) and not find_places(text) and converts(tool) and \
            (shared or units_named(tool, text)):
        points += 2
    return points


def argument_points(tool: Any, text: str) -> int:
    """Points for arguments the text can fill: an expression, "5 km to miles", a zone, a city."""
    kinds = {param_kind(n, s) for n, s in properties(tool).items()}
    points = 3 if expression_in(text) and "expression" in kinds else 0
    points += 2 if conversion_in(text) and {"from", "to"} <= kinds else 0
    points += 2 if iana_zone(text) and "timezone" in kinds else 0
    points += 1 if find_places(text) and kinds & {"place", "places", "timezone"} else 0
    return points + typed_points(tool, text, kinds)


def typed_points(tool: Any, text: str, kinds: set[str]) -> int:
    """Points for typed values only this tool's parameters take: a route ("from X to Y")
    for origin and destination, a code shaped like its example, an e-mail address, two
    currencies for a converter, an enum value of its own named ("swimming", "客厅")."""
    points = 2 * len({w.shape for w in spans.wants_of(properties(tool), [])
                      if w.shape in spans.SHAPED and spans.shaped(slots.Words(tidy(text)), w.shape)})
    if not kinds & {"origin", "destination", "code", "email", "emails", "enum", "currency"}:
        return points
    said = slots.Words(tidy(text))
    if {"origin", "destination"} & kinds and any(slots.find_route(said)):
        points += 2
    for name, schema in properties(tool).items():
        kind = param_kind(name, schema)
        code = slots.find_code(said, str(schema.get("description") or ""),
                               set(split_name(name))) if kind == "code" else None
        if code:  # "CA981" says which tool; a bare number ("30 dollars") hardly does
            points += 2 if re.search(r"[A-Z]", code) or len(code) >= 6 else 1
        elif kind in ("email", "emails") and slots.EMAIL.search(text):
            points += 2
        elif kind == "enum" and \
                not set(map(str, schema.get("enum") or [])) <= {"celsius", "fahrenheit"} and \
                unit_role(name, schema) == "" and \
                enum_value(schema.get("enum") or [], text) is not None:
            points += 1
    said_money = slots.currencies_in(slots.Words(tidy(text))) if "currency" in kinds else []
    if "currency" in kinds and len(said_money) >= 2:
        points += 2
    elif "currency" in kinds and "number" in kinds and any(attached for *_, attached in said_money):
        points += 1  # "$25", "200 元": an amount of money, for a tool that takes one
    return points


_QUANTITY = re.compile(r"(?i)(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?\s*(?:°|℃|℉|[a-z]+\b|[\u4e00-\u9fff])")


def quantity_in(text: str) -> bool:
    """Whether `text` has a number with a unit: "16 °C", "5 km", "100华氏度", "5公里"."""
    return bool(_QUANTITY.search(text or ""))


def units_named(tool: Any, text: str) -> bool:
    """Whether `text` names a value of one of the tool's enums ("°F" names "fahrenheit")."""
    return any(enum_value(s.get("enum") or [], text) is not None
               for s in properties(tool).values() if "enum" in s)


def converts(tool: Any) -> bool:
    """Whether `tool` converts: it takes a number, a unit to convert from and one to convert
    to (convert_units(value, from_unit, to_unit), with strings or enums for the units)."""
    kinds, roles = set(), set()
    for name, schema in properties(tool).items():
        kinds.add(param_kind(name, schema))
        roles.add(unit_role(name, schema))
    return "number" in kinds and {"from", "to"} <= roles


THRESHOLD = 2  # below this, no tool fits: a single place name (1 point) is not a request


def best_tool(text: str, tools: list) -> tuple[Any, int]:
    """The tool that fits `text` best and its score (ties: the first offered); (None, 0) if none."""
    best, best_score = None, 0
    for tool in tools or []:
        if keeper_of(tool):
            continue  # a profile tool is called for what the user states, not for shared words
        points = score(tool, text)
        if points > best_score:
            best, best_score = tool, points
    return best, best_score


@dataclass
class Clause:
    """One request inside the user's message, and the tool that fits it (None: no tool)."""
    text: str
    tool: Any = None


def clauses(text: str, tools: list) -> list[Clause]:
    """The requests in `text`. A piece that fits no tool ("Beijing" in "Beijing and
    Shanghai weather") joins the request before it, or the next one if it comes first,
    with the words that joined them ("weather in Oslo and Rome" stays one request)."""
    found: list[Clause] = []
    waiting = ""
    for joiner, piece in joined_segments(text):
        tool, points = best_tool(piece, tools)
        if points >= THRESHOLD:
            found.append(Clause((waiting + joiner if waiting else "") + piece, tool))
            waiting = ""
        elif found:
            found[-1].text += (joiner + " " if joiner == "," else joiner if joiner.strip() else " ") + piece
        else:
            waiting += (joiner if waiting else "") + piece
    return completed(found)


def completed(found: list[Clause]) -> list[Clause]:
    """Clauses for the same tool that complete each other are one request: in
    "下周五去大阪的机票，从北京出发" the second only adds the origin the first lacks; in
    "Check in Garcia on LH401, aisle please" the second cannot stand alone (it lacks what
    the first gives), so it only adds to it; and for a tool that takes a list, "Add milk,
    eggs and bread to my list" is one list, not two requests."""
    merged: list[Clause] = []
    for clause in found:
        before = merged[-1] if merged else None
        if before is not None and before.tool is clause.tool and not keeper_of(clause.tool):
            lacking = fill_arguments(before.tool, before.text)[1]
            both = f"{before.text}，{clause.text}" if CJK.search(clause.text) else \
                f"{before.text}, {clause.text}"
            alone, joined = fill_arguments(clause.tool, clause.text)[1], fill_arguments(before.tool, both)[1]
            if lacking and len(joined) < len(lacking) and (alone or fragment(before.tool, lacking)) or \
                    not lacking and fragment(clause.tool, alone) or \
                    takes_list(clause.tool) and len(joined) <= len(lacking):
                before.text = both
                continue
        merged.append(clause)
    return merged


def fragment(tool: Any, missing: list[str]) -> bool:
    """Whether a clause lacks a required value a place cannot give: "aisle please" is part of
    the check-in before it; "and Beijing" for the weather is a request of its own."""
    kinds = {param_kind(n, properties(tool).get(n, {})) for n in missing}
    return bool(missing) and not kinds & {"place", "places", "timezone"}


def takes_list(tool: Any) -> bool:
    """Whether the tool takes a list of plain values (its items joined by "and" and ",")."""
    return any(s.get("type") == "array" and param_kind(n, s) in ("other", "emails")
               for n, s in properties(tool).items())


# ------------------------------------------------------------------ parameters

_PLACE_NAMES = {"city", "location", "place", "town", "region", "country", "where", "address",
                "destination", "cities", "locations", "places"}
_TEXT_NAMES = {"query", "q", "keyword", "keywords", "topic", "text", "prompt", "question", "term",
               "terms", "input", "message", "content", "subject", "search"}
_PLACE_ABOUT = re.compile(r"(?i)\b(city|cities|location|place|town|region|country)\b|地点|城市|地区|位置")
_ZONE_ABOUT = re.compile(r"(?i)\biana\b|time ?zone|时区")
_EXPR_ABOUT = re.compile(r"(?i)arithmetic|expression|formula|equation|表达式|算式")


_DATE_ABOUT = re.compile(r"(?i)yyyy-mm-dd|\bdate\b|日期")
_TIME_ABOUT = re.compile(r"(?i)hh:mm|\btime of day\b|\bstart time\b|几点")
_EMAIL_ABOUT = re.compile(r"(?i)\be-?mail(?:s|\s+address(?:es)?)\b|^e-?mail\b|邮箱|邮件地址")
_CURRENCY_ABOUT = re.compile(r"(?i)iso 4217|\bcurrency\b|货币|币种")
_CODE_NAMES = {"symbol", "ticker", "sku", "barcode", "iata", "icao", "isbn", "code", "coin",
               "account", "iban", "phone"}
_CODE_ABOUT = re.compile(r"(?i)\b(?:ticker|symbol|iata|sku|barcode|tracking number|flight number"
                         r"|airline code)\b|代码|条形码|单号|航班号")
_ORIGIN_NAMES = {"origin", "departure", "depart", "start", "source", "from", "pickup"}
_DESTINATION_NAMES = {"destination", "arrival", "arrive", "dest", "end", "to", "dropoff"}
_ROUTE_ABOUT = re.compile(r"(?i)\b(?:city|cities|station|airport|place|point|address|location|"
                          r"where|go)\b|城市|车站|机场|地点|出发|到达")


def param_kind(name: str, schema: Mapping) -> str:
    """What a parameter takes, from its type, format, name and description: "enum",
    "number", "boolean", "places", "emails", "date", "time", "email", "currency", "code",
    "origin", "destination", "country", "timezone", "place", "expression", "language",
    "text", "from", "to" or "other". (Cached on what it reads: every request brings the
    same schemas again.)"""
    kind = schema.get("type")
    return _param_kind(name, tuple(kind) if isinstance(kind, list) else kind,
                       str(schema.get("format") or ""), str(schema.get("description") or ""),
                       "enum" in schema)


@lru_cache(maxsize=4096)
def _param_kind(name: str, kind: Any, form: str, description: str, enum: bool) -> str:
    schema = {"format": form, "description": description}
    named, about = set(split_name(name)), f"{name} {description}"
    if isinstance(kind, tuple):  # ["string", "null"]: the first real type
        kind = next((k for k in kind if k != "null"), None)
    if enum or kind in ("integer", "number", "boolean"):
        return "enum" if enum else {"boolean": "boolean"}.get(kind, "number")
    if kind == "array":
        if _EMAIL_ABOUT.search(about):
            return "emails"
        return "places" if named & _PLACE_NAMES or _PLACE_ABOUT.search(about) else "other"
    if kind not in (None, "string"):
        return "other"
    return typed_kind(name, schema, named, about) or named_kind(named, about)


def typed_kind(name: str, schema: Mapping, named: set[str], about: str) -> str | None:
    """The string kinds read from the schema's format and words: dates, times, e-mail
    addresses, currencies, codes, the ends of a route, countries."""
    form = str(schema.get("format") or "")
    if form == "date" or (named & {"date", "day"} and "time" not in named) or \
            (_DATE_ABOUT.search(about) and not named & {"timezone", "tz", "zone"}
             and not _TIME_ABOUT.search(about)):
        return "date"
    if form == "time" or _TIME_ABOUT.search(about) or named == {"time"}:
        return "time"
    if form == "email" or named & {"email", "mail"} or _EMAIL_ABOUT.search(about):
        return "email"
    if _CURRENCY_ABOUT.search(about) and not named & _CODE_NAMES - {"code"}:
        return "currency"
    if named & _CODE_NAMES or _CODE_ABOUT.search(about) or \
            named & {"number", "id"} and not named & _PLACE_NAMES or codes_shown(about):
        return "code"
    if "country" in named:
        return "country"
    routed = _ROUTE_ABOUT.search(about) or named & {"station", "city", "airport", "place"}
    if named & {"origin", "departure"} or named & _ORIGIN_NAMES and routed:
        return "origin"
    if named & {"destination", "arrival"} or named & _DESTINATION_NAMES and routed:
        return "destination"
    if "country" in named:
        return "country"
    return None


_UNIT_WORDS_ = {"unit", "units", "scale", "system", "format", "measure", "type", "currency"}


def codes_shown(about: str) -> bool:
    """Whether the description's examples are codes ("e.g. 42", "e.g. CA981, MU5101"):
    digits or capitals and digits, no lower-case word among them."""
    examples = slots.code_examples(about)
    return bool(examples) and all(re.fullmatch(r"[A-Z0-9-]*\d[A-Z0-9-]*", e) for e in examples)


def named_kind(named: set[str], about: str) -> str:
    """The older kinds, by name first, then by description."""
    for kind_, names in (("timezone", {"timezone", "tz", "zone"}), ("place", _PLACE_NAMES),
                         ("expression", {"expression", "expr", "formula", "equation", "math"}),
                         ("language", {"language", "lang"}), ("text", _TEXT_NAMES),
                         ("from", {"from", "source", "base"}), ("to", {"to", "target", "into"})):
        if named & names and (kind_ not in ("from", "to") or len(named) == 1 or named & _UNIT_WORDS_):
            return kind_  # "to_unit" is a side of a conversion; "to_account" is not
    for kind_, pattern in (("timezone", _ZONE_ABOUT), ("place", _PLACE_ABOUT),
                           ("expression", _EXPR_ABOUT)):
        if pattern.search(about):
            return kind_
    if re.search(r"(?i)\blanguage\b|语言", about):
        return "language"
    return "text"


def enum_forms(value: Any) -> list[str]:
    """The ways an enum value is written: itself, "premier league" for "premier_league",
    plurals ("miles"), synonyms in English and Chinese ("on foot", "步行"; slots.SYNONYMS)."""
    return slots.enum_forms(value)


def enum_value(values: list, text: str, role: str = "") -> Any:
    """The enum value `text` names: "in Fahrenheit" / "华氏" → "fahrenheit"; the earliest if
    several are. For one side of a conversion (role "from" or "to", see unit_role): the value
    said for that side (side_of), never one said for the other. In "Convert 100 °F to
    Celsius", from_unit is "fahrenheit" and to_unit "celsius"."""
    lowered, found = (text or "").lower(), []
    for value in values:
        own = _own_forms(value)
        for word in enum_forms(value):
            hit = re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", lowered)
            if hit and len(word) == 1 and not side_of(lowered, hit.start(), hit.end()):
                continue  # "m", "磅", "高": a one-letter unit only with a number or "to" ("5 m")
            if hit and word:
                found.append((hit.start(), value, side_of(lowered, hit.start(), hit.end()),
                              word not in own, -len(word), slots.closeness(value, word)))
                break
    found.sort(key=lambda f: f[0:1] + f[3:])  # at one place, the value itself ("urgent")
    found = [f[:3] for f in found]               # before a value it is a synonym of (high)
    if role:  # a value said for the other side is not this one's
        mine = [value for _, value, side in found if side == role]
        theirs = {value for _, value, side in found if side and side != role}
        found = [f for f in found if f[1] in mine] or [f for f in found if f[1] not in theirs]
    return found[0][1] if found else None


def _own_forms(value: Any) -> frozenset[str]:
    """The ways a value is written that are the value itself, not a synonym."""
    return _own_forms_of(str(value).lower())


@lru_cache(maxsize=4096)
def _own_forms_of(said: str) -> frozenset[str]:
    spaced = said.replace("_", " ").replace("-", " ")
    return frozenset({said, spaced, spaced + "s", spaced + "es",
                      spaced[:-1] + "ies" if spaced.endswith("y") else spaced})


_TO_MARK = re.compile(r"(?:\b(?:to|into|in|as|how many|how much)|成|为|多少|等于|是几|几)\s*(?:degrees?\s*)?$")
_FROM_MARK = re.compile(r"(?:\bfrom|\d)\s*(?:degrees?\s*|度\s*)?$")


def side_of(text: str, start: int, end: int) -> str:
    """Which side of a conversion the unit at text[start:end] is on: "from" after "from"
    or attached to a number ("100 °F", "华氏100度"); "to" right after "to", "into", "in",
    "as", "成", "为", "多少" or "等于" ("to Celsius", "换算成摄氏度"); "" when nothing says."""
    before = text[:start]
    if _FROM_MARK.search(before) or re.match(r"\s*-?\d", text[end:]):
        return "from"
    return "to" if _TO_MARK.search(before) else ""


_FROM_NAMES, _TO_NAMES = {"from", "source", "base", "original"}, {"to", "target", "into"}
_FROM_ABOUT = re.compile(r"(?i)\b(?:from|source|original)\b|原|源")
_TO_ABOUT = re.compile(r"(?i)\b(?:to|into|target|desired)\b|目标")


def unit_role(name: str, schema: Mapping) -> str:
    """The side of a conversion a unit parameter takes: "from" (from_unit, source, or a
    description saying "from"), "to" (to_unit, target, "to"/"into"/目标), or ""."""
    kind = param_kind(name, schema)
    if kind in ("from", "to"):
        return kind
    if kind != "enum":
        return ""
    named, about = set(split_name(name)), str(schema.get("description") or "")
    if named & (_FROM_NAMES | _TO_NAMES):
        return "from" if named & _FROM_NAMES else "to"
    if not (named & _UNIT_WORDS_ or re.search(r"(?i)\bunits?\b|\bconver|\bscale\b|单位|换算", about)):
        return ""  # "goes above or below the target" is no side of a conversion
    if _FROM_ABOUT.search(about):
        return "from"
    return "to" if _TO_ABOUT.search(about) else ""


_ABOUT_EN = re.compile(r"(?i)\b(?:about|regarding|on)\s+(.+)")
_ABOUT_ZH = re.compile(r"关于(.+?)(?:的(?:新闻|消息|资讯|信息|内容)|$)")
_QUOTE = re.compile(r"\"([^\"]+)\"|(?:^|(?<=[\s\u4e00-\u9fff]))'([^']+)'(?=$|[\s,.?!\u4e00-\u9fff])"
                    r"|「([^」]+)」|《([^》]+)》")
_COLON = re.compile(r"(?<!\d)[:：]\s*(.+)$")
# Words that start a request but are not what it is about ("Find me a recipe for ...").
_LEAD_EN = set("""find search show get play add save put set look looking give need want some
please me i i'm my a an the what what's whats how is are was were does do mean means take make
list new latest current any good best remind tell let can could would you check start create
book send up out for of to about on in at with into from by this that it there here today
tonight now tomorrow quick simple down many much long often did eat ate eaten drink
had have has recommend suggest open order buy reserve schedule cancel remove delete update
share post call track convert calculate compute translate define detect explain describe
summarize summarise read write record log turn switch pull bring fetch lookup i'd i'll i've
we'd we'll let's id like love wanna gonna trying looking searching hoping planning adjust
scale ship roll release push launch request place raise file tick off mark rename change run
please grab fetch""".split())
# Words after which the rest of an English phrase is about something else.
_CUT_EN = set("""that which who under below over in at on by from to for into near tomorrow
today tonight this next please between within less more than using via""".split())
_GENERIC = set("""something anything thing things stuff item items product products word words
text one this that it music song songs movie movies film job jobs note notes task tasks package
parcel flight stock market language languages league team score recipe dish meeting event
reminder timer food me here there""".split()) | {
    "这个", "那个", "东西", "什么", "商品", "音乐", "歌", "电影", "工作", "笔记", "待办", "快递",
    "航班", "语言", "比分", "菜谱", "会议", "一下", "一首歌", "首歌", "单词"}
_LEAD_ZH = re.compile(r"^(?:帮我|帮忙|麻烦|请|给我|替我|我想|我要|想要|想|我|一下|一个|一款|一条|一封|"
                      r"订|预订|预约|一张|一间|一份|一杯|一瓶|一本|一部|一些|给|"
                      r"一首|一份|一些|个|款|查查|查一下|查|看看|看一下|找找|找|搜一下|搜索|搜|"
                      r"播放|放|来|在|去|把|有没有|有什么|有|记一下|记|加|设|定|是|的|从|用|"
                      r"最新的|最新|今天|现在|明天|新建|创建|建个|建一个|建|开个|开一个|提个|提一个|"
                      r"买张|买一张|买|点杯|点一杯|点个|约个|约一节|续一下|续开|续配|续)+")
_CUT_ZH = re.compile(r"[开买订点要写发打做来拿寄送查找放听看叫约租借换]?[一两二三四五六七八九十几]+"
                     r"[张个份杯瓶本部件双首条篇项间封辆台只]|的|吗|呢|吧|啊|了|怎么|如何|什么|多少|是不是|有没有|哪些|哪个|哪|有|是|在|"
                     r"还|要|能|到|和|跟|与|现在|今天|明天|今晚|今日|昨天|后天|上午|下午|晚上|早上|[，,。.？?！!、：:；;]"
                     r"|换成|改成|调整成|调成|标成|标记为|设为|设成|改为|变成"
                     r"|\s+(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])\s+")


def free_text(text: str, tool: Any) -> str | None:
    """The words left for a query-like parameter, without claiming: see leftover()."""
    return leftover(Reading(text), tool)


def quoted(reading: Reading) -> str | None:
    """The first quoted piece still free ('good morning', "hello", 「你好」, 《晴天》). Claimed."""
    words_ = reading.words
    for found in _QUOTE.finditer(words_.rest):
        said = next((g for g in found.groups() if g), None)
        if said and said.strip():
            words_.claim(found.start(), found.end())
            return said.strip()
    return None


def leftover(reading: Reading, tool: Any, said_as: bool = False) -> str | None:
    """The free text a text parameter takes, when nothing quoted is left: what follows a
    colon ("Save a note: buy milk"), "saying"/"说" (for a message, `said_as`),
    "about"/"关于", else the first phrase no other parameter took, without the tool's own
    words, the request's verbs and fillers, and cut where another part of the sentence
    starts ("pancakes that take ..."). None when only generic words are left ("Take a
    note", "Define a word"): then it is asked for."""
    rest, own = reading.words.rest, own_words_of(tool)
    cues = (_COLON, _BODY, _ABOUT_EN, _ABOUT_ZH) if said_as else (_COLON, _ABOUT_EN, _ABOUT_ZH)
    found = next(filter(None, (c.search(rest) for c in cues)), None)
    group = next((k for k in range(1, (found.re.groups if found else 0) + 1) if found.group(k)), 1)
    if found and (found.group(group) or "").replace("\x00", "").strip(" ?？!！。.,，"):
        start, end = found.span(group)
        said = rest[start:end].split("\x00")[0].strip(" ?？!！。.,，'\"")
        if not CJK.search(said) and found.re not in (_COLON, _BODY):  # "the movie X from 2010"
            kept = phrase_en(said, own)
            start, said = (start + kept[0], said[kept[0]:kept[1]]) if kept else (start, "")
        said = re.sub(r"[的了吗呢吧]+$", "", said)
        if "\x00" in rest[start:end]:  # "…日志丢失，加上 [bug 标签]": 加上 belongs to the taken value
            said = re.sub(r"\s*[，,]\s*[\w\u4e00-\u9fff]{1,4}$", "", said)
        if said and not all(w.lower() in _GENERIC or is_own(w.lower(), own)
                            for w in re.findall(r"[\w'&-]+", said)):
            reading.words.claim(start, start + len(said))
            return said
    if is_statement(reading.text):
        return None  # "I hate my job" tells; it asks for nothing to search
    return leftover_zh(reading, tool) if CJK.search(rest) else leftover_en(reading, tool)


_STATEMENT_EN = re.compile(r"(?i)^\s*(?:i|i'm|i've|i was|we|we're|my|our)\b(?!\s*(?:'d|would|want|need|"
                           r"wanna|am looking|'m looking|looking|trying|going to|gonna|planning|"
                           r"hoping|have to|must|should|'ll|will|'d like))")
_STATEMENT_ZH = re.compile(r"^\s*(?:我|我们)(?!想|要|需要|打算|准备|希望|得|该|应该|请)")


def is_statement(text: str) -> bool:
    """Whether a message tells something rather than asks ("I hate my job", "我跑了步"):
    it starts with "I"/"we"/"我" (not "I want", "I need", "我想", "我要"), and it has no
    question in it. Its words are not free text for a tool."""
    if re.search(r"[?？]|吗|呢|\bplease\b|请", text):
        return False
    return bool(_STATEMENT_ZH.match(text) if CJK.search(text) else _STATEMENT_EN.match(text))


_EXAMPLE_TEXT = re.compile(r"(?i)(?:e\.g\.|for example|such as|例如|比如)[^.;)）。]*")


def topic_words_zh(tool: Any) -> tuple[str, ...]:
    """The Chinese words (two characters or more) of the concepts a tool is about, its name
    and description; weather, time and news words are unknown_place's own already."""
    about = " ".join(split_name(tool_name(tool))) + " " + str(function_of(tool).get("description") or "")
    return tuple(w for c in sorted(concepts(about) - {"weather", "time", "news"})
                 for w in CONCEPTS[c].split() if CJK.search(w) and len(w) >= 2)


def own_values(tool: Any) -> frozenset[str]:
    """Words that are the tool's own topic, in English and Chinese, never a value for it
    ("shopping", "购物" for a shopping list)."""
    return _own_values(" ".join(split_name(tool_name(tool))) + " " + _EXAMPLE_TEXT.sub(" ", tool_text(tool)))


@lru_cache(maxsize=1024)  # the same tools come back on every request
def _own_values(about: str) -> frozenset[str]:
    chinese = {w for c in concepts(about) for w in CONCEPTS[c].split() if CJK.search(w)}
    return frozenset({w.lower() for w in re.findall(r"[A-Za-z]+", about)} | _own_words(about) | chinese)


def own_words_of(tool: Any) -> frozenset[str]:
    """A tool's own English words (stems) and those of its concepts; not the examples its
    descriptions give ("Restaurant name, e.g. Hotpot House": "Hotpot" is a value)."""
    return _own_words(" ".join(split_name(tool_name(tool))) + " " + _EXAMPLE_TEXT.sub(" ", tool_text(tool)))


@lru_cache(maxsize=1024)
def _own_words(own: str) -> frozenset[str]:
    return frozenset(set(words(own)) | english_words(" ".join(CONCEPTS[c] for c in concepts(own))))


def is_own(word: str, own: set[str]) -> bool:
    """Whether a word is the tool's own, a stop word or a request's verb ("to-do" is: both
    of its parts are)."""
    return all(part in _LEAD_EN or part in _STOP or stem(part) in own
               for part in word.split("-") if part)


def leftover_en(reading: Reading, tool: Any) -> str | None:
    own, rest = own_words_of(tool), reading.words.rest
    for run in re.finditer(r"[^\x00,;?!.:]+", rest):
        kept = phrase_en(run.group(0), own)
        if not kept:
            continue
        start, end = run.start() + kept[0], run.start() + kept[1]
        said = rest[start:end]
        if all(w.lower() in _GENERIC or is_own(w.lower(), own)
               for w in re.findall(r"[\w'&-]+", said)):
            continue
        reading.words.claim(start, end)
        return said
    return None


def phrase_en(text: str, own: set[str]) -> tuple[int, int] | None:
    """Where the phrase a request is about lies in `text`: after its verbs, fillers and
    the tool's own words ("Tell me about the movie"), up to where another part of the
    sentence starts ("that", "in", "from", "tomorrow" ...), without trailing own words."""
    tokens = list(re.finditer(r"[\w'&-]+", text))
    kept: list[re.Match] = []
    verbs_done = False  # after "remind me to", "take" is what to do, not a request's verb
    for k, token in enumerate(tokens):
        low = token.group(0).lower()
        if not kept:
            proper = low == "the" and k + 1 < len(tokens) and tokens[k + 1].group(0)[0].isupper()
            skip = low in _STOP or stem(low) in own if verbs_done else is_own(low, own)
            verbs_done = verbs_done or low in ("to", "that")
            if skip and not proper:
                continue
        elif low in _CUT_EN:
            break
        kept.append(token)
    while kept and is_own(kept[-1].group(0).lower(), own):
        kept.pop()
    return (kept[0].start(), kept[-1].end()) if kept else None


_VERB_ZH = r"[发打开买订点要写做看听找查叫约租借换寄送拿问]"


def leftover_zh(reading: Reading, tool: Any) -> str | None:
    about = _EXAMPLE_TEXT.sub(" ", tool_text(tool)) + " " + " ".join(split_name(tool_name(tool)))
    own = sorted({w for c in concepts(about) for w in CONCEPTS[c].split() if CJK.search(w)},
                 key=len, reverse=True)  # not the examples' words: "e.g. latte" is a value
    rest = reading.words.rest
    masked = rest
    for word in own:
        masked = masked.replace(word, "\x00" * len(word))
    masked = _CUT_ZH.sub(lambda m: "\x00" * len(m.group(0)), masked)
    for run in re.finditer(r"[^\x00]+", masked):
        lead = _LEAD_ZH.match(run.group(0))
        start = run.start() + (lead.end() if lead else 0)
        said = rest[start:run.end()].strip()
        if len(said) > 2 and re.search(_VERB_ZH + "$", said) and re.search(r"[给跟向对]$", rest[:start]):
            said = said[:-1]  # "给小王发消息": 发 sends the message, it is not part of the name
        if len(said) < 2 or said in _GENERIC or said.lower() in _GENERIC or \
                re.fullmatch(r"[\d\W_]+", said):
            continue
        reading.words.claim(start, run.end())
        return said
    return None


# ------------------------------------------------------------------ filling arguments

@dataclass
class Reading:
    """What one request offers a tool's parameters; what one takes, the next cannot."""
    text: str
    target: Target | None = None                         # the place this call is about
    targets: list[Target] = field(default_factory=list)  # every place of the request
    prefer: Mapping = field(default_factory=dict)        # the user's lasting preferences
    words: slots.Words = None                            # the words not taken yet
    route: tuple | None = None                           # (origin, destination), once read

    def __post_init__(self) -> None:
        self.text = tidy(self.text)
        self.words = self.words or slots.Words(self.text)


UNKNOWN = object()  # value_for: said, but not known well enough to send (not even the default)


# Which parameters read the words first: the most recognisable values, so that a date's
# digits are not taken for a number and a code's letters are not free text.
_KIND_ORDER = ("emails", "email", "code", "date", "time", "origin", "destination", "currency",
               "language", "country", "enum", "boolean", "timezone", "expression", "from", "to",
               "number", "places", "place", "text", "other")


def fill_arguments(tool: Any, text: str, target: Target | None = None,
                   targets: list[Target] | None = None,
                   prefer: Mapping | None = None) -> tuple[dict, list[str]]:
    """Arguments for `tool` from `text` (and the place this call is about), plus the
    required parameters nothing could fill with confidence. Each parameter reads the
    words by its kind (param_kind), the most recognisable kinds first; what one takes is
    not read again. An enum value the text does not name is the one the user prefers, if
    any ("units: fahrenheit" in a profile); a value not found falls back to the schema's
    default; an optional parameter with neither is left out."""
    reading = Reading(text, target, list(targets or []), prefer=prefer or {})
    props, needed = properties(tool), required(tool)
    kinds = {name: param_kind(name, schema) for name, schema in props.items()}
    # Values marked out by their shape (a URL, a file, "owner/name") or quoted after a cue
    # ("titled 'X'") first: their digits and words are no one else's (spans.py).
    loose = {n: s for n, s in props.items() if kinds[n] not in _TYPED and (
        kinds[n] not in ("place", "places", "origin", "destination") or spans.shape_of(n, s) in spans.FIRST)}
    found: dict[str, Any] = spans.fill(loose, needed, reading.words, spans.FIRST, quoted_only=True)
    cued_first = _BY_NAMES | _SAID_NAMES | {"subject", "body"}  # "by X", "saying X" first
    order = sorted(props, key=lambda n: (_KIND_ORDER.index(kinds[n]),
                                         not set(split_name(n)) & cued_first,
                                         n not in needed))  # then required before optional
    for name in [n for n in order if _KIND_ORDER.index(kinds[n]) < _KIND_ORDER.index("number")]:
        if found.get(name) is None:
            found[name] = in_language(value_for(name, props[name], reading, tool), props[name])
    fill_numbers(tool, props, kinds, reading, found)
    # Then what a cue introduces (a label, who pays, where to search around ...), once the
    # typed values are taken so a phrase ends where they were.
    open_ = {n: s for n, s in loose.items() if found.get(n) is None}
    if open_:
        found.update(spans.fill(open_, needed, reading.words, spans.LATER, own_values(tool)))
    marked = spans.cue_only(loose, needed)
    for name in [n for n in order if _KIND_ORDER.index(kinds[n]) > _KIND_ORDER.index("number")]:
        if found.get(name) is None and name not in marked:
            found[name] = in_language(value_for(name, props[name], reading, tool), props[name])
    implied_on(props, found, needed)
    said_default(props, found)
    arguments, missing = {}, []
    for name, schema in props.items():
        value = found.get(name)
        if value is UNKNOWN:  # the words say it, but not in a form it can be sent in
            missing.append(name)
            continue
        value = schema.get("default") if value is None else value
        if value is not None:
            arguments[name] = value
        elif name in required(tool):
            missing.append(name)
    return arguments, missing


def said_default(props: Mapping, found: dict) -> None:
    """A date the description says is taken when left out ("today if left out") is left
    out when the words say just that ("今天")."""
    for name, schema in props.items():
        about = str(schema.get("description") or "")
        if isinstance(found.get(name), str) and \
                re.search(r"(?i)\btoday if (?:left out|not given|omitted)|defaults? to today|默认(?:为)?今天", about) \
                and found[name] == slots.today().isoformat():
            found[name] = None


def implied_on(props: Mapping, found: dict, needed: list[str]) -> None:
    """An on/off switch the words do not name is "on" when they set something only a device
    that is on has: "Set the living room light to 40%", "make the bedroom lights blue",
    "把走廊灯调暗到10%"."""
    for name, schema in props.items():
        values = {str(v).lower() for v in schema.get("enum") or []}
        if found.get(name) is None and values == {"on", "off"}:
            others = [n for n in props if n != name and n not in needed and found.get(n) is not None
                      and "default" not in props[n]]
            if others:
                found[name] = next(v for v in schema["enum"] if str(v).lower() == "on")


# Kinds slots.py reads by their type alone; spans.py fills the others (text, codes, places,
# the ends of a route, lists) when the words mark their value out.
_TYPED = {"currency", "date", "time", "language", "country", "enum", "number", "boolean",
          "expression", "timezone", "emails"}


def fill_numbers(tool: Any, props: Mapping, kinds: Mapping, reading: Reading,
                 found: dict) -> None:
    """Number parameters: first those whose unit is said with a number ("3 nights",
    "20%", "under 100"), then a single number left over goes to the single required number
    parameter still empty (or to the single one at all)."""
    numbers = [n for n in props if kinds[n] == "number"]
    for name in numbers:
        found[name] = number_for(name, props, reading, numbers, alone=False)
    for group in ([n for n in numbers if n in required(tool)], numbers):
        left = [n for n in group if found.get(n) is None]
        if len(left) == 1:
            found[left[0]] = number_for(left[0], props, reading, numbers, alone=True)
    for name in [n for n in numbers if found.get(n) is None]:
        found[name] = implied_number(name, props[name], reading)
    left = [n for n in numbers if n in required(tool) and found.get(n) is None]
    bare = [q for q in slots.quantities(reading.words)
            if not q.unit or q.unit.lower() in _STOP or not q.unit[0].isalpha()]
    if len(left) >= 2 and len(bare) == len(left) == len(slots.quantities(reading.words)):
        for name, said in zip(left, bare, strict=True):  # "Add 3 and 4": a = 3, b = 4
            integer = props[name].get("type") == "integer"
            found[name] = int(said.value) if integer or said.value.is_integer() else said.value
            reading.words.claim(said.start, said.end)


_MAX_WORDS = re.compile(r"(?i)\b(?:max(?:imum)?|full|all the way up|loudest)\b|最大|最高|最响")
_MIN_WORDS = re.compile(r"(?i)\b(?:min(?:imum)?|lowest|all the way down)\b|最小|最低")


def implied_number(name: str, schema: Mapping, reading: Reading) -> float | int | None:
    """A number the words imply without writing it: a duration between two times ("from
    15:00 to 16:30": 90 minutes, "9点到11点": 120), one of what an enum took ("a cup of
    sugar": 1 cup), the top or bottom of the parameter's range ("音量开到最大": 100)."""
    named, about = set(split_name(name)), str(schema.get("description") or "")
    integer = schema.get("type") == "integer"
    unit = slots.unit_words(list(split_name(name)), about)
    if unit in (slots.UNITS["minute"], slots.UNITS["hour"]):
        span = slots.time_span(reading.text)
        if span:
            minutes = (int(span[1][:2]) - int(span[0][:2])) * 60 + int(span[1][3:]) - int(span[0][3:])
            return minutes if unit == slots.UNITS["minute"] else minutes / 60
    if named & {"amount", "quantity", "value", "count"} and \
            re.search(r"(?i)(?:\b(?:a|an|one)\s+|(?<![\d一二三四五六七八九十两])一\s*)\x00", reading.words.rest):
        return 1
    bounds = re.search(r"(\d+)\s*(?:-|–|~|to|到)\s*(\d+)", about)
    low, high = (schema.get("minimum"), schema.get("maximum")) if not bounds else \
        (int(bounds.group(1)), int(bounds.group(2)))
    for pattern, bound in ((_MAX_WORDS, high), (_MIN_WORDS, low)):
        said = pattern.search(reading.words.rest)
        if said and bound is not None:
            reading.words.claim(*said.span())
            return int(bound) if integer or float(bound).is_integer() else bound
    return None


def best_effort(tool: Any, text: str, arguments: dict, missing: list[str]) -> dict:
    """`arguments` with every required parameter in `missing` given a value of its type,
    for a call that must be made (tool_choice "required" or a named function) although
    the words do not say it: a real model forced to call guesses too. The guess is the
    plainest one the schema allows: an example from its description, its first enum
    value, today's date, the first place or number in the text, the text itself."""
    filled = dict(arguments)
    for name in missing:
        filled[name] = guess(name, properties(tool).get(name, {}), text)
    return {name: filled[name] for name in properties(tool) if name in filled}


def guess(name: str, schema: Mapping, text: str) -> Any:
    """A typed best-effort value for one parameter (see best_effort)."""
    kind, about = param_kind(name, schema), str(schema.get("description") or "")
    numbers = [float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text)]
    examples = slots.code_examples(about)
    places = find_places(text)
    if kind == "enum":
        values = schema.get("enum") or [None]
        return described_enum(values, about, text) or values[0]
    if kind == "boolean":
        return False
    if kind == "number":
        value = numbers[0] if numbers else 1
        return int(value) if schema.get("type") == "integer" or float(value).is_integer() else value
    if kind in ("places", "emails", "other") and schema.get("type") == "array":
        return [p.name for p in places] if kind == "places" else []
    simple = {"date": slots.today().isoformat(), "time": slots.clock.now().strftime("%H:%M"),
              "currency": "USD", "timezone": "UTC",
              "language": "en" if slots.wants_code(schema) else "English"}
    if kind in simple:
        return simple[kind]
    if kind in ("place", "origin", "destination", "country") and places:
        return places[0].name
    if examples:
        return examples[0]
    return tidy(text).strip()  # "" when the words hold nothing: never the parameter's own name


def described_enum(values: list, about: str, text: str) -> Any:
    """The enum value whose own part of the description shares the most words with `text`,
    for a description that explains its values one by one ("weather: rain, temperature …;
    clock: the time or date …", as a router's toolbox list does); None when no value is
    explained, or none (or more than one) fits best."""
    said, scores = words(text), {}
    for value in values:
        part = re.search(rf"(?<![\w-]){re.escape(str(value))}\s*[:：=]\s*([^;；\n]+)", about)
        if part:
            scores[value] = len(said & words(f"{value} {part.group(1)}"))
    best = max(scores.values(), default=0)
    winners = [value for value, score in scores.items() if score == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def number_for(name: str, props: Mapping, reading: Reading, numbers: list[str],
               alone: bool) -> int | float | None:
    schema = props[name]
    others = [slots.unit_words(list(split_name(n)), str(props[n].get("description") or ""))
              for n in numbers if n != name]
    return slots.find_number(reading.words, list(split_name(name)),
                             str(schema.get("description") or ""),
                             schema.get("type") == "integer", others, alone)


_IN_ENGLISH = re.compile(r"(?i)\bin english\b(?!\s*(?:or|and|/)\s*chinese)|英文(?![或和/]中文)")


def in_language(value: Any, schema: Mapping) -> Any:
    """A value in the language the schema asks for: "Country name in English" gets
    "France" for "法国" (places and countries are known in both); a Chinese value it
    cannot put in English is not sent (None: asked for, if required)."""
    if not isinstance(value, str) or not CJK.search(value) or \
            not _IN_ENGLISH.search(str(schema.get("description") or "")):
        return value
    place = lookup(value)
    if place:
        return place.name
    return slots.COUNTRIES.get(value)


def value_for(name: str, schema: Mapping, reading: Reading, tool: Any) -> Any:
    """The value of one parameter, by its kind (see param_kind); None when not found."""
    kind, text, target, words_ = param_kind(name, schema), reading.text, reading.target, \
        reading.words
    about, named = str(schema.get("description") or ""), set(split_name(name))
    if kind == "enum":
        values, role = schema.get("enum") or [], unit_role(name, schema)
        said = enum_value(values, words_.rest, role)
        if said is not None:
            topics = set(slots.TOPICS.get(str(said).lower(), "").split(","))
            claim_words(words_, [f for f in enum_forms(said) if f not in topics])
        return said if said is not None or role else preferred(values, reading.prefer)
    if kind == "boolean":
        said, where = switch_said(words_.rest, named)
        for start, end in where:
            words_.claim(start, end)
        return said
    if kind in ("emails", "email"):
        found = slots.find_emails(words_)
        return (found or None) if kind == "emails" else (found[0] if found else None)
    if kind == "code":
        coin = named & {"coin", "crypto"} or re.search(r"(?i)\b(?:coin|crypto)", about)
        others = {w.rstrip("s") for n, sc in properties(tool).items()
                  if n != name and param_kind(n, sc) == "code" for w in split_name(n)}
        found = slots.find_code(words_, about, named, others)
        return found or (slots.find_currency(words_, "", crypto=True) if coin else None)
    if kind == "date":
        return slots.find_date(words_)
    if kind == "time":
        return slots.find_time(words_)
    if kind in ("origin", "destination"):
        if reading.route is None:
            reading.route = slots.find_route(words_)
        return reading.route[kind == "destination"]
    if kind == "currency":
        return slots.find_currency(words_, currency_side(name, schema, tool))
    if kind == "country":
        role = "to" if named & {"destination", "to", "visit", "target"} else \
            "from" if named & {"passport", "origin", "from", "home", "citizenship", "nationality"} \
            else ""
        country = slots.find_country(words_, role) or (target.value if target and not role else None)
        if country and re.search(r"(?i)\biso\b|\bcode\b|alpha-?2|代码", about):
            return slots.ISO_COUNTRIES.get(country) or slots.find_code(words_, about, named)
        return country
    if kind == "places":
        return [t.value for t in reading.targets] or None
    if kind == "place":
        if target:
            claim_place(words_, target.value)
        return target.value if target else None
    if kind == "timezone":
        if target and not target.timezone and not iana_zone(text):
            return UNKNOWN  # "the time in Oslo": a place whose zone is not known
        return (target.timezone if target else None) or iana_zone(text)
    if kind == "expression":
        return expression_in(text)
    if kind in ("from", "to"):
        pair = conversion_in(text)
        return pair[kind == "to"] if pair else None
    if kind == "language":
        source = bool(named & {"from", "source"})
        return slots.find_language(words_, source, slots.wants_code(schema))
    if kind == "text":
        if named & _BY_NAMES:
            return by_whom(reading)
        if named & {"subject", "body"}:
            said = cued(reading, _SUBJECT if "subject" in named else _BODY)
            if said is None and "subject" in named and name in required(tool):
                return quoted(reading) or colon_payload(reading)  # "a ticket: X", "工单：X"
            return said
        said_as = bool(named & _SAID_NAMES)
        if name not in required(tool):  # an optional text is taken only when marked out
            return (cued(reading, _BODY) if said_as else None) or quoted(reading)
        return (cued(reading, _BODY) if said_as else None) or quoted(reading) or \
            leftover(reading, tool, said_as)
    return None


_SAID_NAMES = {"message", "text", "content", "msg", "sms"}


_ON = re.compile(r"(?i)\b(?:turn|switch|put)\s+(?:\w+\s+)?on\b|\benable\b|打开|开启|开一下|开灯")
_OFF = re.compile(r"(?i)\b(?:turn|switch|put)\s+(?:\w+\s+)?off\b|\bdisable\b|关掉|关闭|关上|关灯")
_NOT = re.compile(r"(?i)\b(?:not|no|non|without)\s*-?\s*$|不$|非$")


def switch_in(text: str, named: set[str]) -> bool | None:
    """A yes/no parameter: for a switch ("on", "enabled", "power"), whether the words turn
    it on or off; else True when its name is said ("remote jobs", "make it public",
    "匿名投票"), False when said with a "not" ("no vibration", "without symbols",
    "不要震动", "不带符号"); None when the words do not say."""
    return switch_said(text, named)[0]


# Chinese for the words yes/no parameters are named with ("vibrate" → 震动).
_SWITCH_ZH = {"vibrate": "震动|振动", "public": "公开", "anonymous": "匿名", "mop": "拖地",
              "dry": "试运行|演练|预演", "draft": "草稿", "symbol": "特殊符号|特殊字符|符号",
              "formatting": "格式|排版", "format": "格式", "open": "开着|营业中|在营业",
              "multiple": "多选", "everyone": "所有人|全体成员|全员", "remote": "远程",
              "private": "私密|私人", "recurring": "重复", "urgent": "紧急", "notify": "通知大家"}
_NOT_ZH = re.compile(r"(?:不要|不用|不带|不需要|无需|别|不)[\u4e00-\u9fff]{0,3}$")
_NOT_EN = re.compile(r"(?i)\b(?:not|no|non|without|don't|do not|never)\s*-?\s*(?:[a-z]+\s+){0,2}$")


def _root(word: str) -> str:
    """"vibrate" and "vibration" → "vibrat"; "symbols" → "symbol"."""
    return re.sub(r"(?:ation|ting|ing|ed|es|s|e)$", "", word) if len(word) > 4 else word


def switch_said(text: str, named: set[str]) -> tuple[bool | None, list[tuple[int, int]]]:
    """switch_in, with where the words said it (to be claimed)."""
    if named & {"on", "enabled", "enable", "active", "power", "state", "switch"}:
        on, off = _ON.search(text), _OFF.search(text)
        said = None if bool(on) == bool(off) else bool(on)
        return said, [m.span() for m in (on, off) if m] if said is not None else []
    hits = []
    for word in named - _STOP - {"only", "is", "include", "allow", "keep", "choice", "run"}:
        hits += list(re.finditer(rf"(?i)\b{re.escape(_root(word))}\w*", text))
        hits += list(re.finditer(_SWITCH_ZH.get(word, _SWITCH_ZH.get(word.rstrip("s"), "(?!)")), text))
    if not hits:
        return None, []
    hit = min(hits, key=lambda m: m.start())
    negated = (_NOT_ZH if CJK.search(hit.group(0)) else _NOT_EN).search(text[:hit.start()])
    start = negated.start() if negated else hit.start() - (text[hit.start() - 1:hit.start()] == "@")
    return not negated, [(start, hit.end())]


_BY_NAMES = {"artist", "author", "singer", "band", "director", "composer", "writer", "creator",
             "performer"}
_BY_EN = re.compile(r"\bby\s+((?:[Tt]he\s+)?[A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*)*)")
_BY_ZH = re.compile(r"([\u4e00-\u9fff]{2,5}?)(?:唱的|的(?=[《“\"「]))")
_SUBJECT = re.compile(r"(?i)\bsubject(?:\s+line)?(?:\s+(?:is|of))?\s*[:：]?\s*[\"']([^\"']+)[\"']"
                      r"|\bsubject(?:\s+line)?(?:\s+(?:is|of))?\s*[:：]\s*([^,.;!?]+)"
                      r"|主题(?:是|为|：|:)\s*[“\"「]?([^”\"」，。！？]+)")
_BODY = re.compile(r"(?i)\b(?:saying|that says|with the (?:text|message|body))\s+[\"“]?([^\"”]+)"
                   r"|(?:内容是|内容为|正文是|说)\s*[:：]?\s*[“\"「]?([^”\"」。！？]+)")


def by_whom(reading: Reading) -> str | None:
    """Who made it: "by The Beatles", "周杰伦的《晴天》". Claimed."""
    found = _BY_EN.search(reading.words.rest) or _BY_ZH.search(reading.words.rest)
    if not found:
        return None
    who = found.group(1).strip()
    lead = _LEAD_ZH.match(who) if CJK.search(who) else None
    reading.words.claim(found.start(), found.end())
    return who[lead.end():] if lead and lead.end() < len(who) else who


def colon_payload(reading: Reading) -> str | None:
    """What follows a colon ("open a ticket: app crashes on upload", "工单：数据库超时"), up to
    a comma and a value taken by another parameter. Claimed."""
    found = _COLON.search(reading.words.rest)
    if not found:
        return None
    start = found.start(1)
    said = reading.words.rest[start:].split("\x00")[0]
    said = re.split(r"[，,]\s*$|[，,](?=[^，,]*$)", said.rstrip())[0] if "\x00" in reading.words.rest[start:] \
        else said
    said = said.strip(" ?？!！。.,，'\"")
    if not said or not re.search(r"[\w\u4e00-\u9fff]", said):
        return None
    reading.words.claim(start, start + len(said))
    return said


def cued(reading: Reading, pattern: re.Pattern) -> str | None:
    """Text the words introduce for this parameter ("with the subject 'Lunch'",
    "saying I'll be late", "主题是“周报”"); None without the cue: an e-mail's subject is
    not guessed from the rest of the sentence. Claimed."""
    found = pattern.search(reading.words.rest)
    said = next((g for g in found.groups() if g), None) if found else None
    if not said or not said.strip(" .,!?。，！？\x00"):
        return None
    reading.words.claim(found.start(), found.end())
    return said.split("\x00")[0].strip(" .,!?。，！？")


def claim_words(words_: slots.Words, forms: list[str]) -> None:
    """Take the way of writing an enum value found first in the words, the longest there
    ("high priority" takes "high", "技术类工单" takes 技术)."""
    hits = [hit for form in forms if len(form) > 1
            for hit in [re.search(rf"(?<![a-z]){re.escape(form)}(?![a-z])", words_.rest.lower())] if hit]
    if hits:
        hit = min(hits, key=lambda h: (h.start(), -len(h.group(0))))
        words_.claim(hit.start(), hit.end())


def claim_place(words_: slots.Words, value: str) -> None:
    """Take every way the place is written out of the words (it is not free text)."""
    place = lookup(value)
    for key in {value, *((place.name, place.zh, *place.aliases) if place else ())}:
        for found in re.finditer(re.escape(key), words_.rest, flags=re.I):
            words_.claim(found.start(), found.end())


def currency_side(name: str, schema: Mapping, tool: Any) -> str:
    """"from" or "to" for a currency parameter (from_currency, base / to_currency, quote,
    target); "" for a lone one (the currency a price is given in)."""
    named = set(split_name(name))
    if named & {"from", "source", "base", "sell"}:
        return "from"
    if named & {"to", "target", "quote", "into", "buy"}:
        return "to"
    currencies = [n for n, s in properties(tool).items() if param_kind(n, s) == "currency"]
    if len(currencies) == 2:
        return "from" if currencies[0] == name else "to"
    return ""


# ------------------------------------------------------------------ tool results

def read_result(content: Any) -> Any:
    """A tool result as data: the parsed JSON when it is JSON, else the plain text."""
    try:
        return json.loads(content)
    except (TypeError, ValueError):
        return "" if content is None else str(content)


def error_in(data: Any) -> str | None:
    """The error a result reports ({"error": "..."}), or None."""
    error = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(error, Mapping):
        error = error.get("message") or json.dumps(error, ensure_ascii=False)
    return str(error) if error else None


def number_in(data: Any, hint: str = "") -> float | None:
    """The number a result gives: the first whose key contains `hint` ("temp" finds
    "temperature"; a result without such a key has none), or with no hint the first one."""
    if not isinstance(data, Mapping):
        return None
    numeric = [(str(k).lower(), v) for k, v in data.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return next((v for k, v in numeric if hint in k), None)


# ------------------------------------------------------------------ lasting preferences

PROFILE_HEAD = "What you know about this user:"  # how lesson_lib.profile's as_prompt() starts
PROFILE_HEAD_ZH = "你对这位用户的了解："  # ... in the Chinese edition (its catalogue's words)
PROFILE_KEYS = ("name", "language", "units", "diet", "project")  # what a profile tool keeps


@dataclass(frozen=True)
class Preference:
    """Something lasting the user says about themselves: "I'm vegetarian" → diet."""
    key: str    # one of PROFILE_KEYS
    value: str  # a fixed English value where there is one ("vegetarian", "fahrenheit",
                # "Chinese"), else the user's own words ("不吃香菜", "a trip planner")
    said: str   # the words that said it


_I_AM = r"\b(?:i'm|i am|im)\s+"
_DIETS = (  # (value, English, Chinese): what "I'm vegetarian" / "我吃素" store
    ("vegan", rf"{_I_AM}(?:now\s+)?(?:an?\s+)?vegan\b",
     r"我(?:现在|已经|开始|改)?(?:吃纯素|是纯素食者|是严格素食者)"),
    ("vegetarian", rf"{_I_AM}(?:now\s+)?(?:an?\s+)?vegetarian\b|\bi (?:don't|do not) eat meat\b",
     r"我(?:现在|已经|开始|改)?(?:是素食者|是素食主义者|是吃素的|吃素|不吃肉)"),
    ("no spicy food", r"\bi (?:don't|do not|can't|cannot) (?:eat|have|handle) spicy(?: food)?",
     r"我不吃辣|我不能吃辣|我吃不了辣|我不太能吃辣"))
_DIET_OWN = (  # (pattern, how the value is written): the user's own words
    (re.compile(rf"(?i){_I_AM}allergic to ([a-z][a-z -]*[a-z])"), "allergic to {}"),
    (re.compile(r"(?i)\bi (?:don't|do not|can't|cannot) eat ([a-z][a-z -]*[a-z])"), "no {}"),
    (re.compile(r"我对([\u4e00-\u9fff]{1,6}?)过敏"), "对{}过敏"),
    (re.compile(r"我(?:不吃|不能吃|吃不了)([\u4e00-\u9fff]{1,6})"), "不吃{}"))
_NOT_DIETS = {"饭", "了", "东西", "早饭", "午饭", "晚饭", "早餐", "午餐", "晚餐", "it", "that", "this",
              "here", "there", "now", "out", "much", "anything", "breakfast", "lunch", "dinner"}
_UNIT_WORDS = {"fahrenheit": "fahrenheit", "°f": "fahrenheit", "℉": "fahrenheit", "华氏": "fahrenheit",
               "celsius": "celsius", "°c": "celsius", "℃": "celsius", "摄氏": "celsius"}
_UNITS = (re.compile(r"(?i)\b(?:use|using|prefer|switch to|stick to|always|i like)\b[^,;]{0,25}?"
                     r"(fahrenheit|celsius|°f|°c|℉|℃)"),
          re.compile(r"(?:用|使用|习惯|喜欢|改成|改用|换成|都用)\s*(华氏|摄氏)度?"))
_LANGUAGE_WORDS = "|".join(sorted(_LANGUAGES, key=len, reverse=True))
_LANGUAGE = (re.compile(rf"(?i)\b(?:answer|reply|respond|talk|speak|write|chat)\s+(?:to me\s+|with "
                        rf"me\s+)?in\s+({_LANGUAGE_WORDS})\b|\b(?:speak|use)\s+({_LANGUAGE_WORDS})"
                        rf"\s+(?:with|to) me\b|\bi prefer\s+({_LANGUAGE_WORDS})\s*$"),
             re.compile(rf"(?:用|说)({_LANGUAGE_WORDS})(?:回答|回复|交流|和我说|跟我说|聊|说话|对话|写)"
                        rf"|请说({_LANGUAGE_WORDS})"))
_PROJECT = (re.compile(rf"(?i){_I_AM}(?:currently\s+|now\s+)?(?:working on|building|developing)"
                       r"\s+(.+)|\bmy (?:current )?project is\s+(.+)|\bi work on\s+(.+)"),
            re.compile(r"我(?:现在|目前|正)?在(?:做|搞|写)(.+?项目)|我(?:现在|目前|正)?在开发(.+)"
                       r"|我的项目是(.+)"))
_NOT_PROJECTS = {"it", "this", "that", "something", "stuff", "things", "什么", "啥"}
_LASTING = re.compile(r"(?i)\bfrom now on\b|\balways\b|\bin (?:the )?future\b|\bby default\b"
                      r"|\bevery time\b|以后|从现在开始|今后|一直|总是|每次|默认")
_ONE_OFF = re.compile(r"(?i)\b(?:today|tonight|tomorrow|this time|just this once|for now|"
                      r"this one|this question)\b|今天|明天|今晚|这次|这一次|这回|这个问题|暂时")
_ASKING = re.compile(r"(?i)\b(?:what|what's|how|which|where|when|who|why|should|shall|do|does|"
                     r"is|are)\b|吗|什么|多少|几|怎么|哪")


@lru_cache(maxsize=4096)
def preferences_in(text: str) -> tuple[Preference, ...]:
    """The lasting preferences `text` states, clause by clause: "I'm vegetarian", "我不吃辣",
    "call me Xiaoming", "use Fahrenheit", "请用中文回答", "I'm working on a trip planner".
    Not a one-off: a clause that says "today", "this time", "这次" ... states nothing (unless
    the message says "from now on", "always", "以后" ...), and a unit or a language said
    inside another request ("use Fahrenheit for the weather in Chengdu") is for that
    request only. "What's the weather in Fahrenheit today?" asks; it states nothing.
    A question about the user states nothing of what it asks ("我吃素吗？", "我在做什么
    项目？": asked_preferences).
    (Cached: every request reads every user message of the conversation again.)"""
    lasting, found = bool(_LASTING.search(text or "")), []
    for piece in segments(text):
        if _ONE_OFF.search(_LASTING.sub(" ", piece)) and not lasting:
            continue
        asked = set(asked_preferences(piece))  # "我吃素吗？" asks; it states no diet
        name = name_in(piece)
        found += [Preference("name", name, piece)] if name else []
        for key, read in (("diet", _diet), ("units", _units), ("language", _language),
                          ("project", _project)):
            value, said = read(piece)
            if key in asked:
                continue
            if value and (lasting or key in ("diet", "project") or not _asks_more(piece, said)):
                found.append(Preference(key, value, said))
    return tuple(found)


def _diet(piece: str) -> tuple[str | None, str]:
    lowered = piece.lower()
    for value, english, chinese in _DIETS:
        said = re.search(english, lowered) or re.search(chinese, piece)
        if said:
            return value, piece[said.start():said.end()]
    for pattern, written in _DIET_OWN:
        said = pattern.search(piece)
        food = said.group(1).rstrip("了的啦呢哦啊") if said else ""
        if food and food.lower() not in _NOT_DIETS:
            return written.format(food), said.group(0)
    return None, ""


def _units(piece: str) -> tuple[str | None, str]:
    said = next(filter(None, (p.search(piece) for p in _UNITS)), None)
    if said is None or re.search(r"\d", piece):  # "16度换成华氏" converts a number
        return None, ""
    return _UNIT_WORDS[said.group(1).lower()], said.group(0)


def _language(piece: str) -> tuple[str | None, str]:
    said = next(filter(None, (p.search(piece) for p in _LANGUAGE)), None)
    word = next((g for g in said.groups() if g), "") if said else ""
    return (_LANGUAGES[word.lower()], said.group(0)) if said else (None, "")


def _project(piece: str) -> tuple[str | None, str]:
    said = next(filter(None, (p.search(piece) for p in _PROJECT)), None)
    value = next((g for g in said.groups() if g), "") if said else ""
    value = re.sub(r"^(?:一个|一款|个)", "", value.strip(" \t.,!?。，！？「」\"'"))
    if not value or value.lower() in _NOT_PROJECTS or len(value) > 60:
        return None, ""
    return value, said.group(0)


def _asks_more(piece: str, said: str) -> bool:
    """Whether the clause asks something besides the preference: a place or a question word
    in what is left ("use Fahrenheit for the weather in Chengdu")."""
    rest = piece.replace(said, " ")
    return bool(find_places(rest) or _ASKING.search(rest))


def without_preferences(text: str) -> str:
    """`text` without the lasting preferences it states (nor a name, nor a leading "Hi"):
    what is left to answer. "I'm vegetarian, where should I eat in Chengdu?" → "where
    should I eat in Chengdu"."""
    said = [p.said for p in preferences_in(text) if p.key != "name"]
    rest = []
    for piece in segments(text):
        for words_said in said:
            if words_said in piece:  # "From now on, use Fahrenheit": "From now on" goes too
                piece = _LASTING.sub(" ", piece.replace(words_said, " "))
        piece = without_introduction(piece)
        if words(piece):
            rest.append(piece.strip(" ,，"))
    return ", ".join(rest)


def stated_preferences(messages: list) -> dict[str, str]:
    """{key: value} of the lasting preferences the user messages state; the latest wins."""
    stated = {}
    for m in messages:
        if isinstance(m, Mapping) and m.get("role") == "user":
            stated.update({p.key: p.value for p in preferences_in(text_of(m))})
    return stated


def profile_in(messages: list) -> dict[str, str]:
    """The profile a system message carries, as {key: value}: "What you know about this
    user: name: Xiaoming; diet: vegetarian" (lesson_lib.profile's as_prompt()). The latest
    such message wins; the line ends at a newline."""
    found: dict[str, str] = {}
    for m in messages:
        if not isinstance(m, Mapping) or m.get("role") not in ("system", "developer"):
            continue
        text = text_of(m)
        for head in (PROFILE_HEAD, PROFILE_HEAD_ZH):
            at = text.find(head)
            if at >= 0:
                break
        if at >= 0:
            line = text[at + len(head):].split("\n")[0]
            pairs = [part.split(":", 1) for part in line.split(";") if ":" in part]
            found = {k.strip(): v.strip() for k, v in pairs if k.strip() and v.strip()}
    return found


_ASKS_ABOUT_ME = re.compile(
    r"(?i)^\s*(?:(?:and|so|then|wait|ok|okay|hey|remind me)[,\s]+)?(?:am i|do i|does my|is my|"
    r"are my|have i|did i (?:say|tell you)|what(?:'s|\s+is|\s+are|\s+was)?\s+my|which \w+ (?:do|am|did) i|"
    r"what \w+ (?:do|am|did) i|what am i|what do you know about (?:my|me)|can i eat|"
    r"do you (?:know|remember) "
    r"(?:my|if i|whether i|what))\b")
_ASKS_ZH = re.compile(r"[吗么嘛呢]|什么|啥|是不是|吃不吃|是否|哪种|哪个|哪国|几")
_NOT_ABOUT_ME_ZH = re.compile(r"哪里|哪儿|在哪|去哪|怎么走|附近")
_ASKED_KEYS = {  # (English words, Chinese words): a question about that profile key
    "diet": (r"\b(?:vegetarian|vegan|diet|meat|spicy|allergic|allergies)\b",
             r"吃素|素食|纯素|饮食|吃肉|吃辣|忌口|过敏|荤"),
    "units": (r"\b(?:units?|fahrenheit|celsius)\b", r"单位|华氏|摄氏"),
    "language": (r"\blanguage\b", r"语言|哪种语|用什么语"),
    "project": (r"\b(?:project|working on|building)\b", r"项目|在做什么|在开发什么|在搞什么"),
}


def asked_preferences(text: str) -> list[str]:
    """The profile keys a question about the user asks ("Am I vegetarian?" → diet, "我在做
    什么项目？" → project, "Which units do I use?" → units): a question about oneself ("am
    I", "do I", "my …"; 我 with 吗/什么 …), naming no place ("Where can I eat vegan food in
    Chengdu?" asks about Chengdu, not about the user). The name is asks_name's."""
    text = tidy(text or "").strip()
    if not text or find_places(text):
        return []
    if CJK.search(text):
        if "我" not in text or not _ASKS_ZH.search(text) or _NOT_ABOUT_ME_ZH.search(text):
            return []
        return [key for key, (_en, zh) in _ASKED_KEYS.items() if re.search(zh, text)]
    if not _ASKS_ABOUT_ME.search(text):
        return []
    return [key for key, (en, _zh) in _ASKED_KEYS.items() if re.search(en, text.lower())]


LANGUAGE_CODES = {"Chinese": "zh", "English": "en"}  # the languages the model answers in


def preferred(values: list, prefer: Mapping) -> Any:
    """The enum value the user prefers (a profile's "units: fahrenheit"), or None."""
    wanted = {str(v).lower() for v in prefer.values()}
    return next((v for v in values if str(v).lower() in wanted), None)


# ------------------------------------------------------------------ the profile tool

@dataclass(frozen=True)
class Keeper:
    """An offered tool that keeps a fact about the user under a key (remember_preference):
    its name, the parameter for the key, the one for the value, and the keys it takes."""
    name: str
    key_param: str
    value_param: str
    keys: tuple  # the key parameter's enum; () when any key is taken

    def key_for(self, key: str) -> str | None:
        """The key this tool takes for one of PROFILE_KEYS ("units" may be "unit")."""
        if not self.keys:
            return key
        return next((k for k in self.keys if str(k).lower() in (key, key.rstrip("s"))), None)


_KEEPER_WORDS = {stem(w) for w in ("remember", "preference", "profile", "memorize", "save", "store")}
_KEEPER_ZH = ("记住", "偏好", "喜好", "资料", "档案")
_KEY_NAMES = {"key", "field", "attribute", "category", "aspect"}


def keeper_of(tool: Any) -> Keeper | None:
    """The tool as a Keeper, if it is one: its name or description speaks of remembering
    (remember, preference, profile, 记住, 偏好 ...) and its parameters take a key (an enum
    with two of PROFILE_KEYS or more; or a string called key/field/category when the
    words say preference or profile) and a string value. Such a tool is never chosen by
    shared words (best_tool): only a lasting preference the user states calls it."""
    about = f"{' '.join(split_name(tool_name(tool)))} {function_of(tool).get('description') or ''}"
    said = english_words(about) & _KEEPER_WORDS
    if not said and not any(w in about for w in _KEEPER_ZH):
        return None
    props = properties(tool)
    key = next((n for n, s in props.items()
                if len({str(v).lower() for v in s.get("enum") or []} & set(PROFILE_KEYS)) >= 2),
               None)
    if key is None and (said & {"preference", "profile"} or "偏好" in about or "资料" in about):
        key = next((n for n, s in props.items() if set(split_name(n)) & _KEY_NAMES
                    and "enum" not in s and s.get("type", "string") == "string"), None)
    value = next((n for n, s in props.items() if n != key and "enum" not in s
                  and s.get("type", "string") == "string"), None)
    if key is None or value is None:
        return None
    return Keeper(tool_name(tool), key, value, tuple(props[key].get("enum") or ()))


def remembered_in(data: Any) -> bool:
    """Whether a tool result says a fact was kept: {"key", "value", "previous", "changed"}
    (what remember_preference returns)."""
    return isinstance(data, Mapping) and {"key", "value", "previous", "changed"} <= set(data)
