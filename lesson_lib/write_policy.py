"""A write policy: a statement becomes the user's fact only when the user said it of themself, plainly, with the same yes or no.

Long-term memory's gate for "save this about the user" (LongTermMemory.remember_user_fact,
said_by_user in lesson_lib.longterm) asks this module. Comparing words is not enough:
"I'm not vegetarian" holds every word of "The user is vegetarian", "我朋友住在成都" every
word of "用户住在成都". So the user's messages are read clause by clause, and a clause that
says the fact's content (its words, or for Chinese its characters, at least COVERAGE of
them; a small lexicon lets "过敏" say "allergic" in a code-switched message, and a little
knowledge of the world says a fact in other words: a breed is a dog or a cat ("our beagle",
金毛), a pet at home is one the user has (我家猫), teaching a subject is being a teacher (教
数学), a reaction every time is an allergy ("X makes me break out in hives", 一吃X就起疹子),
being in a place now or for good is living there; each number, name and address of the fact
must be said) supports it only when all of these hold:

- **the same yes or no**: not, n't, never, no, no longer, quit, used to, can't stand,
  不, 没(有), 未, 别, 不再, 戒了, 讨厌, 以前 … and a no said without a "not" (avoid, steer
  clear of, sold, gave away, died; 远离, 忌口, 卖给…了, 走丢了; 我是真不行 after the content)
  counted on both sides; two no's that mean yes take their verb with them ("I never miss my
  Sunday swim" says the swim, never "The user misses …"; 跑步我从来没断过) ("I'm not vegetarian"
  supports "The user is not vegetarian", never "The user is vegetarian"); words that only
  look negative are not counted (不过, 不错, 非常, 差不多, 不得不, not only); a fact that goes
  on past its first clause is read with the next clause ("我们决定六月去杭州，不去成都了"),
  and a "not" must reach the same words on both sides ("I moved to Shanghai, not Beijing"
  never supports "The user moved to Beijing, not Shanghai");
- **about the user**: the last subject before the content is I / my / we / 我 (or none, as
  Chinese often leaves it out, and then the clause before it decides), not "my friend",
  "she", "Tom", 我朋友, 我妈, 他, 小王, and not "the user" in the third person;
- **stated, not asked**: a question ("?", 吗, 是不是, "Am I …") states nothing, but a
  statement that ends by asking for help says what it says ("My dog pulls on the leash, how
  do I stop him?", 我家猫老是半夜叫，怎么办？);
- **real, not supposed**: if, suppose, would, maybe, 如果, 假如, 要是, …的话, 可能 …;
- **the user's own words**: not inside quotation marks, not what someone else says, thinks or
  wrote (reported speech: "my doctor says I'm …", 算命的说我…, and what follows it with no
  subject of its own, 听说, 据说), not an injected instruction
  ("ignore previous instructions", 忽略之前的指令, "remember that the user …");
- **lasting**: not a one-off request ("book me a table tonight", 帮我订明天的票), unless
  the user says it holds from now on (always, 以后, 每次); not a wish or a plan for a fact
  ("I'd love to live by the sea" is not "The user lives by the sea");
- **still true**: when the user's clauses disagree, the newer wins if it says things changed
  ("我去年把车卖了，现在没车" refuses "用户有车"), else a plain "not" wins over a looser
  match ("我不养狗，但我很喜欢狗" refuses "用户养狗"), else nothing is stored; beside a
  "now" the past is over ("I lived in Beijing, now I'm in Shanghai"), and a time that is
  over is not the present even without one ("I was a barista in college", 大学那四年在广州
  住, 住过: refused as "past"); a later sentence
  that corrects or updates the same thing with another value takes the earlier one back
  ("I live in Austin." "Actually we just moved to Dallas.", "我住在北京。" "说错了，我住在
  天津。": refused as "corrected"). A short fact (three words or characters or fewer) must be said whole,
  and a Chinese fact's verb must be said ("我对猕猴桃过敏" does not say "用户吃猕猴桃");
- **meant**: not a joke ("lol jk", 开玩笑的) or sarcasm ("Oh great, I just love Monday
  meetings", 对对对，我最喜欢加班了), not make-believe ("write a poem in which I
  am a dragon", 假装我是…), not a story's character (the protagonist, 主角, 女主).

A short answer to the assistant's question ("Do you eat fish?" "No.") is read as the
statement it makes ("I do not eat fish"). Only messages whose role is "user" count.

    verdict = judge("The user is vegetarian", messages)
    verdict.stored            # False
    verdict.reason            # "negation": the user said the opposite
    verdict.clause            # "i'm not vegetarian": the words that decided
    explain(verdict)          # a sentence for the refusal (MemoryPoisoningError), in _()

Rule-based and deterministic: no model, no network. The offline model's own reading of
preferences (lesson_lib.offline.understand) inspired the Chinese negation; nothing of it is
imported (the stand-in model and the lesson stay apart). Measured by
benchmarks/write_policy.py on a frozen evaluation, tuned only on
lesson_lib/data/write_policy_dev.json (tests/test_write_policy.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lesson_lib.i18n import N_, _
from lesson_lib.terms import STOP_WORDS, stem

COVERAGE = 0.6  # the share of the fact's content a clause must say to be about it
SHORT = 3  # a fact of this many words or characters or fewer must be said whole

# ----------------------------------------------------------------- why a fact is refused

REASONS = {  # reason: what it means, for the refusal's message
    "said": N_("the user said it"),
    "negation": N_("the user said the opposite (a negation mismatch): {clause}"),
    "someone_else": N_("the user said it of someone else, not of themself: {clause}"),
    "question": N_("the user asked it, a question states nothing: {clause}"),
    "hypothetical": N_("the user only supposed it (if, would, maybe), it is not a fact: "
                       "{clause}"),
    "quoted": N_("those are someone else's words the user quoted or reported, not the "
                 "user's own: {clause}"),
    "injection": N_("it comes from an instruction to the assistant (an injection), not from "
                    "the user speaking of themself: {clause}"),
    "one_off": N_("it is a one-off request, not a lasting fact: {clause}"),
    "small_talk": N_("it is small talk, not a fact about the user: {clause}"),
    "not_said": N_("it is not in anything the user said"),
    "corrected": N_("the user took it back, or said later that it changed: {clause}"),
    "past": N_("the user said it of a time that is over, not of now: {clause}"),
}


@dataclass(frozen=True)
class Verdict:
    """What the policy decided of one fact: stored or not, why, and the words that decided."""
    stored: bool
    reason: str               # a key of REASONS
    clause: str | None = None  # the user's words (normalised) that decided, if any

    def __bool__(self) -> bool:
        return self.stored


def explain(verdict: Verdict) -> str:
    """The reason, as a sentence in the learner's language."""
    return _(REASONS[verdict.reason]).format(clause=repr(verdict.clause or ""))


# ----------------------------------------------------------------- the words that decide

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_CJK}]")
_LATIN = re.compile(r"[a-z0-9][a-z0-9'’\-]*")
_UNIT = re.compile(rf"[{_CJK}]|[a-z0-9]+(?:['’](?!s\b)[a-z]+)?")

# Rewrites applied to the fact and to the user's words alike, longest first: one word for one
# meaning ("love" → "like"), and a negation made explicit ("can't stand" → "not like").
_SAME = [
    # two no's, one yes, the verb with them: "I never miss my Sunday swim" (never "The user
    # misses …"), 跑步我从来没断过
    (r"\b(?:never|don't|do not|dont|doesn't|does not)(?: ever)? (?:miss(?:es)?|skip(?:s)?|"
     r"fail to|forget to)\b", " always "),
    (r"(?:从来|从)?(?:不|没有|没)(?:错过|缺席|落下|漏掉|断过|落过|间断)过?", "一直"),
    (r"\b(?:am|'m|get|got|getting|be|is|are|was|were)\s+used to\b", " accustomed to "),
    (r"\bcan(?:no|'|’)?t stand\b|\bcannot stand\b|\bdislikes?\b|\bdisliked\b|\bhates?\b|\bhated\b"
     r"|\bdetests?\b", " not like "),
    (r"\bloves?\b|\bloved\b|\benjoys?\b|\benjoyed\b|\bis fond of\b|\bam fond of\b|\bfond of\b"
     r"|\bprefers?\b|\bpreferred\b|\bis into\b|\bam into\b|\b(?:i'm|im) into\b", " like "),
    (r"(?:\b(?:is|are)|'s|'re)?(?: not|n't) (?:really |quite )?(?:for me|my thing|my cup of tea)\b",
     " not like "),
    (r"\buntil (?:\d{4}|last|recently|a few|a couple)\b", " never "),
    (r"\b(smok|drink)ers?\b", r"\1e"),
    (r"\bno longer\b|\bnot any ?more\b|\b(?:rarely|seldom|hardly ever|hardly)\b", " never "),
    (r"('m|\bam|\bis|\bare|'re)( not)?(?: really| very| that| so| too)? into\b", r"\1\2 like"),
    (r"\b(?:quit|quitted|stopped|gave up|given up|give up|stop)\b", " never eat drink "),
    # saying no without a "not": avoiding it, swearing it off, getting rid of it
    (r"\b(?:steer(?:s|ed|ing)? clear of|(?:stay|keep)(?:s|ed|ing)? away from|kept away from|"
     r"avoid(?:s|ed|ing)?|"
     r"sw(?:ore|orn|ear|ears) off|cut(?:ting)? out)\b", " never eat drink use watch "),
    (r"(?:\b(?:is|are)|'s|'re)? off (?:my|the) (?:menu|table|list)\b|\boff[- ]limits\b",
     " never eat drink use "),
    (r"\b(?:'m|am|im) done with\b", " never "),
    (r"\bcount me out (?:for|of|on)\b", " i not want "),
    # what one does for a living says what one is: "I teach maths" is being a teacher
    (r"\b(?:i|we) teach\b", " i am a teacher and teach "),
    (r"\bworks? as (an?)\b", r" is \1 "),  # "works as a nurse" is being one
    # a reaction that comes every time is an allergy: "Shellfish makes me break out in hives"
    (r"\b([a-z]+) (?:makes|make|gives|give) me (?:break out in hives|hives|a rash|itch)\b",
     r" i am allergic to \1 "),
    (r"\bmy (?:lips|throat|face|mouth|tongue) swells? up (?:if|when|whenever) (?:anything has |"
     r"i eat |i have |there's |there is )?(?:any )?([a-z]+)\b", r" i am allergic to \1 "),
    # one's role at work is what one is: "My role at the company is UX designer"
    (r"\bmy (?:role|job title|title|position)(?: (?:at|in|on) (?:the |my |our )?[a-z]+)? is\b",
     " i am "),
    (r"我(?:在[^，,。]{0,8}?)?的(?:角色|职位|岗位|职务)是", "我是"),  # "Count me out for anything with …"
    (r"\b(?:sold|got rid of|get rid of|gave away|given away|threw (?:out|away)|thrown "
     r"(?:out|away)|donated|died|passed away|ran away|ditch(?:ed)?)\b", " never have "),
    # "Spanish is my first language": the user speaks it
    (r"\b([a-z]+) is my (?:first|native|mother) (?:language|tongue)\b", r" i speak \1 "),
    (r"\b(?:not|n't|never been) (?:a |really a |much of a )?(?:big |huge )?fan of\b", " not like "),
    (r"\b(?:a |really a )?(?:big |huge )?fan of\b", " like "),
    (r"\b(?!(?:a|an|my|the|no|any|some|food|bad|severe|mild|serious)\b)([a-z]+) allerg(?:y|ies)\b",
     r" allergic to \1 "),  # "a peanut allergy" is being allergic to peanuts
    (r"\bgoes\b", " go "),
    (r"\btouch(?:es|ed)?\b", " eat drink "),  # not touching it: neither eats nor drinks it
    (r"\b(?:don't|do not|doesn't|does not|didn't|never) get along\b", " not like "),
    (r"\bvegetarians?\b", " vegetarian "),
    (r"\bteetotal(?:ler|er)?\b", " not drink alcohol "),
    (r"\b(?:devs?|developers?)\b", " developer "),
    (r"\b(?:born and raised|born and bred|grew up|was born|born|raised) in\b|"
     r"\boriginally from\b|\bcome from\b|\bcomes from\b|\bhail from\b", " from "),
    (r"\bintoleran(t|ce)\b", r" not toleran\1 "),  # 不耐受: "intolerant" says not too
    (r"\bfavourite", "favorite"), (r"\bcolour", "color"), (r"\bcentre\b", "center"),
    (r"\btheatre\b", "theater"), (r"\bneighbour", "neighbor"), (r"\bmum\b", "mom"),
    (r"\bchildren\b|\bchild\b|\bkids\b", " kid "),
    (r"\bmoved (?:out of|away from)\b|\bleft\b", " never live in "),
    (r"\b(?:based|living|residing|reside|resides|settled) in\b", " live in "),
    # "I used to live in Paris, now I'm in Lyon", "Now I'm in Berlin for good": being in a
    # place now, after a move, or for good, is living there (not "I'm in a meeting")
    (r"\bnow,? (?:i'm|i am|im|we're|we are) (?:live )?in\b(?= [a-z])|\b(?:i'm|i am|we're|we are) now in\b"
     r"(?= [a-z])", " now i live in "),
    (r"\b(?:i'm|i am|im|we're|we are) in ([a-z]+) for good\b", r" i live in \1 "),
    (r"\b(?:job|jobs)\b", " work "),
    (r"\b(?:moved|relocated) to\b", " live in "),
    (r"\bnot sure\b", " maybe "),
    (r"搬离了|搬离|搬出了|搬出", "不住在"),
    (r"跳槽|换了工作|换工作", "换工作"),  # 跳槽: changed jobs, so a job is spoken of
    (r"上班|打工|工作", "工作"),
    (r"念书|读书|上学", "上学"),
    (r"已婚|已经结婚|结婚了", "结婚"),
    (r"小孩子|小孩|娃娃|娃|孩子", "孩子"),
    (r"先生|老公|丈夫|爱人(?=是)", "丈夫"),
    (r"太太|老婆|妻子|媳妇", "妻子"),
    (r"在([\u4e00-\u9fff]{2,4})生活", r"住在\1"),
    (r"养了|养着|养", "有"),
    (r"常驻|定居", "住在"),
    (r"(?<![会要想去能])教(?=数学|英语|语文|物理|化学|生物|历史|地理|音乐|美术|体育|编程|钢琴|小学|初中|高中|大学)",
     "是老师教"),
    (r"一(?:吃|碰|喝)([\u4e00-\u9fff]{1,4}?)(?:我)?(?:嘴巴|嘴|脸|喉咙|身上|皮肤)?(?:就|会)+"
     r"(?:起疹子|起红疹|长疹子|起包|过敏|发痒|痒|肿|呼吸困难)", r"对\1过敏"),
    (r"(金毛|哈士奇|二哈|柯基|泰迪|拉布拉多|边牧|柴犬|萨摩耶|比熊|贵宾|德牧|腊肠)(?:犬)?", r"\1狗"),
    (r"(布偶|英短|美短|暹罗|狸花|加菲)(?!猫)", r"\1猫"),
    (r"(?<=[\u4e00-\u9fff])犬", "狗"),
    # "我家猫", "家里那只橘猫": the user's pet, had
    (r"一(?:只|条|头|匹)", ""),  # 一只猫: a cat
    (r"(?:我家|家里)(?:的|那|这)?(?:[一两二三四1-9]?[只条])?(?=\s*[\u4e00-\u9fffa-z ]{0,12}"
     r"(?:猫|狗|宠物|\bdog\b|\bcat\b|\bpuppy\b|\bkitten\b|husky|retriever|corgi))", "我有"),
    (r"每个月", "每月"),
    (r"每个星期|每星期|每周", "每周"),
    (r"搬到了|搬到|搬去了|搬去", "住在"),
    (r"老家(?:是|在)", "来自"),
    (r"(?<![要若就倒还可])是((?:(?![的个])[\u4e00-\u9fff]){2,3})人(?![员士物家])", r"来自\1"),  # 我是东北人: from there
    (r"讨厌|不喜欢|受不了|受够了?|反感|不爱", "不喜"),  # 夜班我受够了: had enough of it
    (r"喜欢|喜爱|热爱|钟爱|偏好|爱", "喜"),
    (r"很少|极少|几乎不|几乎没", "不"),
    (r"不再|再也不|已经不|现在不|不…了", "不"),
    (r"滴酒不沾|一滴酒都不喝|不沾酒", "不喝酒"),
    (r"(?:一口|一点|从来)?都?不(?:碰|沾)", "不吃喝"),  # 不碰: neither eats nor drinks it
    (r"对([\u4e00-\u9fff]{1,6}?)(?:特别|非常|很|有点|有些|比较)?敏感", r"对\1过敏"),
    (r"忌口", "不吃"),
    (r"远离|避开|躲着|躲开|告别了?", "不吃喝用看"),  # keeping away from it says no
    (r"(?:卖|送|转)(?:给[\u4e00-\u9fff]{1,4})?(?:了|掉了|掉)|送人了|扔了|扔掉了?|处理掉了?|"
     r"走丢了|跑丢了|去世了|死了",
     "没有"),  # 卖给表哥了: no longer has it
    (r"烟(?:我)?(?:已经|早就|早)?戒(?:了|掉了|掉)|戒烟", "不抽烟"),  # 我烟已经戒了三年了
    (r"酒(?:我)?(?:已经|早就|早)?戒(?:了|掉了|掉)|戒酒", "不喝酒"),
    (r"戒了|戒掉了|戒掉|已经戒|戒", "不吃喝"),  # quitting it: neither eats nor drinks it
    (r"从来不|从不|从来没有|从来没|从没有|从没", "不"),
    (r"吃素|素食者|素食主义者|素食", "素食"),
    (r"不是", "不"),
]
_SAME = [(re.compile(pattern), to) for pattern, to in _SAME]

# "not" and its kin: one mark each, counted by parity ("I never don't" is rare, but fair).
_NEG_EN = re.compile(r"\b(?:not|never|no|none|nothing|nobody|neither|nor|without)\b|n't\b|n’t\b"
                     r"|\b(?:cannot|cant|dont|doesnt|didnt|wont|isnt|arent|wasnt|havent|hasnt)\b"
                     r"|\bused to\b")
_NEG_EN_ALSO = re.compile(r"\banymore\b|\bany more\b")  # counted only when alone
_NOT_NEG_EN = re.compile(r"\bnot only\b|\bnot just\b|\bno doubt\b|\bno problem\b|\bnot bad\b"
                         r"|\bno way\b|\bnothing but\b|\bcan(?:no|'|’)?t wait\b")
_NEG_ZH = re.compile(r"没有|不|没|未|别|无法|甭|以前|曾经|过去(?=几|一|这|我|的时候)")
_NOT_NEG_ZH = re.compile(r"不过(?!敏)|不错|不少|不久|不同|不仅|不但|不管|不论|不断|不得不|差不多|没关系"
                         r"|非常|无论|要不|不然|了不起|不好意思|没事|不客气|不用谢|没错|对不起|不得了|是不是|有没有"
                         r"|能不能|要不要|会不会|可不可以|对不对|好不好|行不行|用不用|吃不吃"
                         r"|喝不喝|去不去|在不在|喜不喜|不一定|别人|别的|别处|以前的|过去的"
                         r"|特别|区别|分别|个别|级别|类别|性别|差别|识别|辨别|派别")

# How often or how much, in a fact: not what it says ("用户目前住在成都" is "我住在成都").
_ADVERBS_FACT = re.compile(r"现在|目前|如今|一直|平时|通常|一般|总是|经常|已经|比较|非常|特别|真的|其实|"
                           r"最近|本来|确实|大概|主要|东西|食物|\b(?:currently|usually|generally|really|very|"
                           r"mostly|mainly|lately|recently|now|still|actually|quite|pretty|about|"
                           r"around|roughly)\b")

# Words that carry no content of a fact: who it is about, and frame words.
_WHO_FACT = re.compile(r"\b(?:the user|users?|xiaoming)(?:'s|’s)?|用户的|用户|小明的|小明|本人")
_FRAME_EN = STOP_WORDS | {"user", "users", "xiaoming", "never", "anymore", "used", "really",
                          "also", "still", "always", "usually", "currently", "now",
                          "actually", "honestly", "quite", "much", "lot", "ever", "any",
                          "wants", "want", "one", "would", "hope", "plan", "going", "wish", "aim", "intend", "food", "foods",
                          "thing", "things", "stuff", "kind", "type", "sort"}
_FRAME_ZH = set("的了是在很也都就还过着呢吗吧啊呀哦嘛我你他她它们这那个一和跟与对把被说想要会能可以希望打算"
                "不没未别喜") - {"喜"}
_FRAME_ZH.add("不")
# the verb "喜" (like) stays content: "用户喜欢甜食" is about liking.

# Chinese words ↔ English stems, for code-switched messages ("我 don't eat 香菜").
_LEXICON_WORDS = """
喜 like|住 live|办公 work|家 home|去 go|工作 work|上班 work|吃 eat|喝 drink|过敏 allergic|素食 vegetarian|纯素 vegan|
咖啡 coffee|茶 tea|辣 spicy|肉 meat|猫 cat|狗 dog|抽烟 smoke|吸烟 smoke|烟 smoke|开车 drive|
驾照 license|酒 alcohol|学生 student|老师 teacher|医生 doctor|护士 nurse|程序员 programmer|
工程师 engineer|北京 beijing|上海 shanghai|成都 chengdu|广州 guangzhou|深圳 shenzhen|
杭州 hangzhou|西安 xian|南京 nanjing|重庆 chongqing|武汉 wuhan|苏州 suzhou|天津 tianjin|
新加坡 singapore|日本 japan|美国 america|英国 britain|华为 huawei|腾讯 tencent|谷歌 google|
微软 microsoft|花生 peanut|坚果 nut|海鲜 seafood|牛奶 milk|牛肉 beef|猪肉 pork|鱼 fish|
鸡蛋 egg|芒果 mango|蔬菜 vegetable|水果 fruit|啤酒 beer|奶茶 milk|跑步 run|游泳 swim|
生日 birthday|名字 name|叫 call|养 have|有 have|用 use|学 learn|讲 speak|说 speak|中文 chinese|
英语 english|日语 japanese|甜食 sweet|糖 sugar|早起 early|健身 gym|乳糖 lactose|香菜 cilantro|
家乡 hometown|老家 hometown|公司 company|结婚 married|单身 single|孩子 kid|女儿 daughter|
儿子 son|大学 university|预算 budget|房租 rent|工资 salary|周末 weekend|早上 morning|
晚上 evening|睡觉 sleep|开会 meeting|旅行 travel|靠窗 window|座位 seat|过道 aisle|瑜伽 yoga|
篮球 basketball|足球 football|吉他 guitar|钢琴 piano|电影 movie|音乐 music|爵士 jazz|书 book|
读 read|代码 code|乳制品 dairy|奶制品 dairy|小时 hour|每天 every day|每周 every week|
通勤 commute|上下班 commute|夜猫子 night owl|早起 early riser|失眠 insomnia|近视 nearsighted|
粤语 cantonese|普通话 mandarin|高铁 high-speed train|火车 train|飞机 plane|地铁 subway|
自行车 bike|骑车 cycle|徒步 hike|爬山 hike|露营 camp|摄影 photography|画画 paint|唱歌 sing|
跳舞 dance|做饭 cook|烘焙 bake|电脑 computer|手机 phone|博士 phd|硕士 master|研究生 graduate|
本科 undergraduate|律师 lawyer|设计师 designer|会计 accountant|记者 journalist|厨师 chef|
司机 driver|警察 police|退休 retired|怀孕 pregnant|糖 sugar|冰 iced|饮料 drink|果汁 juice|
蛋糕 cake|巧克力 chocolate|面条 noodle|米饭 rice|饺子 dumpling|火锅 hotpot|寿司 sushi|
过敏 allergy|猫毛 cat hair|狗毛 dog hair|花粉 pollen|青霉素 penicillin|酒精 alcohol|
块 yuan|产品经理 product manager|项目经理 project manager|经理 manager|创业公司 startup|
数据分析师 data analyst|分析师 analyst|数据 data|实习 intern|实习生 intern|自由职业 freelancer|
全职 full-time|兼职 part-time|远程 remote|办公室 office|会议 meeting|项目 project|团队 team|
麸质 gluten|耐受 tolerant|早起 early riser morning|人 person people|布偶猫 ragdoll|
夜班 night shift|周末 weekend|假期 holiday vacation|护照 passport|签证 visa|航班 flight|
酒店 hotel|公寓 apartment flat|房子 house|租 rent|买 buy|车 car|电动车 ev|马拉松 marathon|
篮球 basketball|羽毛球 badminton|乒乓球 ping-pong|网球 tennis|健身房 gym|瑜伽 yoga|冥想 meditation|
素食者 vegetarian|纯素食 vegan|甜点 dessert|早餐 breakfast|午饭 lunch|晚饭 dinner|外卖 takeout|
拿铁 latte|美式 americano|绿茶 green tea|红酒 wine|白酒 baijiu|牛排 steak|海鲜 seafood|
内向 introvert|外向 extrovert|已婚 married|结婚 married|离婚 divorced|单身 single|男朋友 boyfriend|
女朋友 girlfriend|丈夫 husband|老公 husband|妻子 wife|老婆 wife|孩子 kid child children|
女儿 daughter|儿子 son|父母 parents|退休 retired|学校 school|大学 college university|
研究生 master graduate|博士 phd|专业 major|计算机 computer science|上学 study school|
苹果手机 iphone|安卓 android|微信 wechat|支付宝 alipay|地铁 subway metro|公交 bus|打车 taxi|
出租车 taxi|通勤 commute|元 yuan|来自 from|东北 northeast|人民币 yuan|钱 money|编程 program|糖尿病 diabetic|怀孕 pregnant|左撇子 left-handed|素 vegetarian|
金毛 retriever|哈士奇 husky|柯基 corgi|拉布拉多 labrador|比格 beagle|布偶 ragdoll|
狗 retriever beagle husky corgi poodle labrador puppy|猫 kitten tabby ragdoll siamese|
"""
_LEXICON = [(zh, tuple(en.split())) for zh, _sep, en in
            (pair.strip().partition(" ") for pair in _LEXICON_WORDS.split("|")) if zh]

# Who a clause is about: the last of these before the content decides.
_ME = re.compile(r"\b(?:i|i'm|i’m|im|i've|i’ve|i'd|i’d|i'll|my|mine|myself|we|we're|we’re|we've"
                 r"|our|ours|ourselves)\b|我们|我|俺|咱们|咱|本人")
_PERSON_EN = ("friend|friends|wife|husband|partner|girlfriend|boyfriend|mom|mum|mother|dad|"
              "father|parents?|son|daughter|kids?|children|child|baby|brother|sister|"
              "siblings?|cousin|uncle|aunt|grandma|grandpa|grandmother|grandfather|"
              "grandparents?|colleague|coworker|co-worker|roommate|flatmate|housemate|"
              "boss|manager|neighbou?rs?|classmate|teacher|doctor|dentist|nurse|client|"
              "customer|fianc[eé]e?|family|in-laws?|nephew|niece|buddy|team|teammates?|"
              "landlord|tenant|students?|someone|somebody|everyone|everybody|people|"
              "nobody|guy|girl|man|woman|spouse|sis|bro|twin|stepmom|stepdad|ceo|"
              "coach|tutor|guests?|patients?|protagonist|main character|heroine|hero|villain|"
              "narrator|cat|cats|dog|dogs|pets?|puppy|kitten|company|"
              "grandson|granddaughter|husband's|wife's")
_OTHER = re.compile(
    rf"\b(?:he|she|they|he's|he’s|she's|she’s|they're|they’re|his|her|hers|their|theirs|him"
    rf"|them)\b|\b(?:{_PERSON_EN})\b|\bthe user\b|\buser's\b|\bxiaoming\b"
    r"|他们|她们|他|她|它|大家|别人|有人|人家|朋友|妈妈|妈|爸爸|爸|母亲|父亲|老婆|老公|妻子|丈夫|"
    r"爱人|女朋友|男朋友|对象|儿子|女儿|孩子|哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹|同事|室友|舍友|老板|"
    r"领导|邻居|同学|爷爷|奶奶|外婆|外公|姥姥|姥爷|叔叔|阿姨|舅舅|姑姑|家人|亲戚|表哥|表姐|表弟|"
    r"表妹|客户|上司|闺蜜|兄弟|宝宝|先生|太太|老师|医生|大夫|朋友们|老铁|用户|小明|经理|总监|员工|客人|房东|"
    r"教练|导师|病人|班主任|主任|校长|教授|同桌|师傅|师父|搭档|合伙人|房客|保姆|司机|助理|秘书|队长|"
    r"部长|组长|主管|总裁|董事长|丈母娘|婆婆|公公|岳父|岳母|嫂子|姐夫|妹夫|姨妈|伯伯|堂哥|堂姐|"
    r"猫咪|狗狗|猫|狗|宠物|公司|队友|网友|孙子|孙女|外甥|侄子|侄女|媳妇|男友|女友|"
    r"主角|主人公|女主|男主|反派|角色(?!是)|"
    r"(?<![我你他她从大很最太较])(?:小|老|阿)(?!家|师|板|婆|公|是|了|年|人|实|样|区|乡|式|爸|妈|时|候|吃|会|学|早|说|少|心|孩|朋|鼠|虎|外)"
    r"[\u4e00-\u9fff]")
_NOT_NAMES = {"honestly", "actually", "yes", "yeah", "no", "nope", "well", "oh", "ok", "okay",
              "so", "and", "but", "also", "still", "now", "currently", "remember", "please",
              "btw", "anyway", "basically", "seriously", "sure", "hey", "hi", "hello", "thanks",
              "just", "fyi", "note", "since", "as", "for", "these", "this", "every", "at",
              "lately", "recently", "nowadays", "today", "usually", "always", "never",
              "sometimes", "in", "on", "from", "after", "before", "right", "true", "fine",
              "correct", "mostly", "generally", "by", "like", "um", "uh", "hmm", "haha", "lol",
              "to", "of", "the", "a", "an", "my", "our", "i", "i'm", "i've", "i'd", "i'll"}

# What someone says, thinks or wrote, and the place before it is the one who says it.
_SAYS = re.compile(r"\b(?:says?|said|saying|thinks?|thought|believes?|believed|claims?|claimed"
                   r"|told me|tells me|telling me|reckons?|insists?|insisted|wrote|writes"
                   r"|mentioned|mentions|heard|hears|according to|texted|emailed|reminded)\b"
                   r"|说(?=[:：，,“\"「]|我|你|他|她|它|\s|$)|觉得|认为|以为|告诉我|提醒我|写着|写道|声称|听说|据说|传言|宣称|表示")
_HEARSAY = re.compile(r"\bi heard\b|\bapparently\b|\brumou?r\b|\ballegedly\b|听说|据说|传言|"
                      r"\bpeople say\b|\bthey say\b")
_QUOTES = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’|(?<![a-z])'[^']{4,}'(?![a-z])")
_REJECT = re.compile(r"\bscam\b|\bfake\b|\bnot true\b|\bnonsense\b|\bdon't believe\b|\blie\b|"
                     r"\bphishing\b|骗|假的|不信|胡说|瞎说|别信|谣言|钓鱼")

_QUESTION_END = re.compile(r"[?？]\s*$|(?:吗|呢|么|吧)[\s。.!！]*$")
_QUESTION_START = re.compile(r"^(?:(?:do|does|did|am|is|are|was|were|can|could|should|shall|"
                             r"would|will|have|has|must|may|might)\s+(?:i|you|we|my)\b|"
                             r"(?:what|where|when|why|how|who|which|whose)\b)")
_QUESTION_ZH = re.compile(r"是不是|有没有|能不能|要不要|会不会|可不可以|对不对|好不好|行不行|"
                          r"(?<![不没])什么(?![都也])|(?<!不)怎么(?![都也])|哪(?![都也里])|为什么|多少|几[个点岁天号]|谁|\bi wonder\b|\bwonder if\b|"
                          r"\bnot sure (?:if|whether)\b|\bwhether\b")
# A question at the end that asks for help with what the sentence said: the rest is said.
_ASKS_HELP = re.compile(r"(?:any|got any|some) (?:tips|ideas|advice|suggestions|thoughts|"
                        r"recommendations)\b|(?:what|how) (?:should|can|do|could) (?:i|we)\b|(?:thoughts|ideas|advice|help)\s*$|"
                        r"(?:我|该|应该|要)*(?:有)?(?:什么|啥)(?:好)?\s*(?:办法|建议|招|tips?|ideas?|advice|推荐)|(?:我|该|应该|要)*(?:怎么办|咋办)|求(?:推荐|建议|支招)")
_SUPPOSE = re.compile(r"\bif\b|\bsuppose\b|\bsupposing\b|\bimagine\b|\bhypothetically\b|"
                      r"\bwhat if\b|\bin case\b|\bpretend\b|\blet's say\b|\bwish\b|\bwere i\b|"
                      r"\bmaybe\b|\bperhaps\b|\bmight\b|\bprobably\b|\bpossibly\b|"
                      r"(?:\bi|\bwe|\byou)(?: would|'d|’d)\b(?! (?:like|rather|prefer))|"
                      r"\bwould\b(?! (?:like|rather|prefer))|\bcould be\b|"
                      r"如果|假如|要是|假设|万一|假使|想象|设想|但愿|要不是|可能|也许|"
                      r"说不定|或许|好像|似乎|假装|扮演|"
                      r"\b(?:write|tell|make up) (?:me )?(?:a|an|one) (?:poem|story|song|tale|limerick)\b|"
                      r"写(?:一)?(?:首|个|篇)(?:诗|故事|歌)|编(?:一)?个故事")
_INJECTION = re.compile(r"\bignore (?:all |any |the |your |my )*(?:previous|prior|above|earlier|"
                        r"preceding|other)\b|\bdisregard\b|\bsystem prompt\b|\bsystem:|"
                        r"\b(?:remember|save|store|note|record)(?: that)? the user\b|"
                        r"\bnew instructions?\b|\bdeveloper mode\b|\bjailbreak\b|"
                        r"忽略(?:之前|以上|前面|上面|先前|此前|所有)|无视(?:之前|以上|前面|所有)|"
                        r"(?:记住|保存|记下|记录)(?:一下)?用户|系统提示|系统通知|系统消息|【系统|\[system\]|"
                        r"<<sys>>|新的指令|开发者模式")
_REQUEST = re.compile(r"^(?:please |pls |can you |could you |would you |will you |kindly )?"
                      r"(?:book|reserve|order|find|get|show|tell|send|buy|call(?! me\b)|text|email|"
                      r"remind|set|schedule|search|look up|check|give|make|plan|cancel|"
                      r"translate|write|help)\b|^(?:please|pls|can you|could you|would you|"
                      r"will you|kindly|let's)\b|帮我|给我|替我|请你|请帮|麻烦|请|帮忙|订一|订个|"
                      r"查一下|查查|看看")
_ONE_OFF = re.compile(r"\b(?:today|tonight|tomorrow|this time|just this once|for now|this "
                      r"weekend|this evening|this afternoon|this morning|right now|next week)\b|"
                      r"\b(?:on|this|next) (?:monday|tuesday|wednesday|thursday|friday|saturday|"
                      r"sunday)\b|\bat \d{1,2}(?::\d\d)?(?: ?[ap]m)?\b|"
                      r"(?<![每一])(?:周|星期|礼拜)[一二三四五六日天1-7]|昨晚|昨天|刚刚|"
                      r"今天|明天|今晚|后天|这次|这一次|这回|这周末|今天下午|今早|明早|刚才|"
                      r"下周|这会儿")
_LASTING = re.compile(r"\bfrom now on\b|\balways\b|\bin (?:the )?future\b|\bby default\b|"
                      r"\bevery \w+\b|\busually\b|\bnormally\b|每周|每个|每星期|每月|一般|通常|平时|"
                      r"\bgoing forward\b|以后|从现在开始|今后|"
                      r"一直|总是|每次|默认|永远|每天")
# How the user feels at the moment: hungry, tired, 饿, 困 … passes; it is no lasting fact.
_PASSING = re.compile(r"\b(?:i'm|i am|im|feeling|feel)(?: so| very| really| a bit| kinda| pretty)?"
                      r" (?:hungry|tired|sleepy|exhausted|bored|thirsty|cold|hot|stressed|"
                      r"busy|sick|sad|nervous|excited)\b|\b(?:so|very|kinda) (?:hungry|tired|"
                      r"sleepy|bored|thirsty)\b|(?:好|有点|有些|太|真|特别|快)(?:饿|累|困|渴|"
                      r"无聊|忙|冷|热|烦|紧张|开心|难受)|(?:饿|累|困|渴)(?:死了|坏了|了)|\btired\b")
_REMEMBER = re.compile(r"\bremember\b|\bnote\b|\bfyi\b|\bjust so you know\b|记住|记一下|"
                       r"记得|告诉你")

_SMALL_TALK = re.compile(r"\b(?:thanks|thank you|thx|haha+|lol|ok|okay|cool|nice|great|awesome|"
                         r"good morning|good night|hi|hello|hey|bye|see you|sure|got it|you're "
                         r"welcome|no problem)\b|谢谢你|谢谢|多谢|感谢|哈+|嘿+|好的|好吧|好嘞|你好|"
                         r"早上好|晚安|再见|拜拜|不客气|没问题|收到|明白了|知道了|辛苦了|嗯+|哦+")
# "I lived in Beijing for years, now I live in Shanghai": beside a "now", the past is over.
_NOW = re.compile(r"\b(?:now|these days|nowadays|currently|at the moment)\b|现在|如今|目前|这几年")
_PAST = re.compile(r"\b(?:\w+ed|was|were|had|did|grew up|grew|went|spent|before|back then|"
                   r"in the past|formerly|previously)\b|之前|那时|当年|住了|"
                   r"待了|干了|做了|工作了")
# "lol jk", "开玩笑的": said in jest, the message states nothing.
_JOKE = re.compile(r"(?<!not )(?<!n't )(?<!no )\b(?:jk|j/k|just kidding|kidding|joking|yeah right)\b|"
                   r"(?<!不是)(?<!不)(?<!没)(?<!别)开(?:个)?玩笑|逗你(?:的|玩)|说着玩|"
                   # sarcasm: "Oh great, I just adore being stuck in traffic"
                   r"^oh,? (?:great|sure|wonderful|fantastic|joy)\b[^.!?]*\bjust "
                   r"(?:love|adore|like)\b"
                   # and 对对对，我最喜欢加班了: a tripled yes before "what I love most"
                   r"|^(?:对|是|好|行){3}[^。！？]*(?:最喜|最爱|爱死|喜死|太喜|超喜)")
_TOPIC = re.compile(r"(?:[a-z][a-z'-]*(?: [a-z][a-z'-]*){0,2}|[\u4e00-\u9fff]{1,4}(?<![吗呢吧么啊]))"
                    r"\s*[?？]")
_PAST_NEG = re.compile(r"\bused to\b|以前|曾经")  # the past already counted as a negation
# A time that is over, said without a "now": "I was a barista in college", "back when …",
# 小时候, 大学那四年, 住过 (a verb's 过: I have once). Not "was" before a participle ("I was
# born in", "I was diagnosed with": what it made holds now), and not a time that still runs
# ("since I was 12", "still", 从小, 一直, 至今, 到现在: _STILL).
_THEN = re.compile(r"\b(?:was|were)\b(?! (?:\w+ed|born|raised|made|told|given|taken|seen|known|"
                   r"brought|taught|kept|found|sent|left|built|bought|sold|hurt|bitten|stung|"
                   r"driven|shown|grown|thrown|written)\b)|\bback when\b|\bas a (?:kid|child|teen|"
                   r"teenager|boy|girl|student)\b|\bwhen i was (?:young|little|small|a kid|a child)\b|"
                   r"\byears ago\b|小时候|小的时候|年轻(?:的)?时|上学(?:的)?时|读书(?:的)?时|"
                   r"大学(?:的)?时|那(?:几|\d+|[一二两三四五六七八九十])年|那会儿|"
                   r"(?:住|做|当|待|呆|学|养|练|干|读|教|开|骑|抽|喝|用)过(?![敏去来])")
_STILL = re.compile(r"\bsince\b|\bstill\b|\bever since\b|从小|一直|至今|到现在|到今天")
_SENTENCES = re.compile(r"[^.!?。！？\n]+[.!?。！？]*|[.!?。！？]+")
_CLAUSES = re.compile(r"(?<!\d)[,，](?!\d)|[;:；：、]|\s[-–—]+\s|——|\bbut\b|但是|可是|不过(?!敏)|然而|而且|\bwhereas\b")
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|of course|correct|right|indeed|absolutely|i do|"
                  r"i am|对|是的|是啊|是|嗯|对的|当然|没错|对啊|有)")
_NO = re.compile(r"^(?:no|nope|nah|not really|never|not at all|i don't|i do not|i'm not|"
                 r"i am not|不|没|没有|不是|从不|从来不)")


def _stem(word: str) -> str:
    """terms.stem twice ("meetings" → "meeting" → "meet"), and a final "e" dropped: "live"
    and "lives" → "liv"."""
    word = stem(stem(word.strip("'-")))
    return word[:-1] if len(word) > 3 and word.endswith("e") and word.isascii() else word


_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}
_POWERS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_WORD_NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve")  # "one" is left alone: it is as often "a" or "someone"
_CHINESE_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]{2,}|[十百千万]")


def _chinese_number(text: str) -> int | None:
    """五千 → 5000, 两千五 → 2500, 三百五十 → 350, 十二 → 12, 一万 → 10000; None if it
    is not a number (一些, 一起 never get here: a lone 一 … is left alone)."""
    total = section = digit = 0
    last_power = 10 ** 9
    for char in text:
        if char in _DIGITS:
            digit = _DIGITS[char]
        elif char == "万":
            total += (section + digit) * 10000
            section = digit = 0
            last_power = 10000
        else:
            power = _POWERS[char]
            section += (digit or 1) * power
            digit = 0
            last_power = power
    if digit and last_power >= 100 and last_power != 10 ** 9:  # 两千五 → 2500
        digit *= last_power // 10
    return total + section + digit


def _numbers(text: str) -> str:
    """Numbers one way: 6,000 → 6000, 5k → 5000, 五千 → 5000 (a run of two or more numeral
    characters, or one of 十百千万, with a digit or 两 … before it)."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\b(\d+)k\b", lambda m: str(int(m.group(1)) * 1000), text)
    text = re.sub(r"\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
                  lambda m: str(_WORD_NUMBERS.index(m.group(1)) + 2), text)

    def convert(m: re.Match) -> str:
        run = m.group(0)
        if not any(c in _POWERS for c in run) and len(run) < 2:
            return run
        if all(c in _DIGITS for c in run):
            return run  # 一一, 三三: not a number worth converting
        return str(_chinese_number(run))

    text = _CHINESE_NUMBER.sub(convert, text)
    text = re.sub(r"[二两三四五六七八九](?=月|日|号|点|岁|次|年|天|块|元|周|小时|公里|个|只|杯)|"
                  r"一(?=月|日|号|点|岁)",  # 一个, 一只: "a", not a number to be said
                  lambda m: str(_DIGITS[m.group(0)]), text)
    text = re.sub(r"(?<=\d)号", "日", text)
    return re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", text)


def _normal(text: str) -> str:
    """NFKC, lower case, numbers as digits, one spelling of each meaning (_SAME)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    text = _numbers(text)
    text = re.sub(r"^\s*(?:no|nope|nah|yes|yeah|yep|well|oh|ok|okay)\s+(?=(?:i|i'm|my|we)\b)", "",
                  text)
    for pattern, to in _SAME:
        text = pattern.sub(to, text)
    return re.sub(r"[ \t]+", " ", text)


def _negations(text: str) -> int:
    """How many negations `text` holds (parity decides). A "nor" after another negation
    goes on with it ("neither my wife nor I", "I don't drink nor smoke": one each)."""
    en = _NOT_NEG_EN.sub(" ", text)
    zh = _NOT_NEG_ZH.sub("  ", en)
    english = [m.group(0) for m in _NEG_EN.finditer(zh)]
    english = english[:1] + [w for w in english[1:] if w != "nor"]
    count = len(english) + len(_NEG_ZH.findall(zh))
    if not count and _NEG_EN_ALSO.search(zh):
        count = 1
    return count


# A wish or a plan is not the thing itself: "I'd love to live by the sea" supports "The
# user would like to live by the sea", not "The user lives by the sea".
_WISH = re.compile(r"\b(?:want|wants|wanted|would like|'d like|hope|hopes|wish|wishes|dream of|"
                   r"dreams of|plan|plans|planning|going|aim|aims|intend|intends) to\b"
                   r"(?! be (?:called|addressed|named))|"
                   r"\bthinking (?:about|of)\b|\bconsidering\b|"
                   r"想要|想|希望|打算|计划|准备|梦想|盼望|考虑")


def _negative(text: str) -> bool:
    return _negations(text) % 2 == 1


def _says_no(text: str) -> bool:
    """Does a fact, or the words of a clause that say it, say no? Each part of it keeps its
    own no (a negation does not reach past _WITHIN): "I don't smoke, and I don't drink",
    "我酒量不行，基本不喝" and "用户不抽烟也不喝酒" say no, twice, not yes."""
    return any(_negative(part) for part in _WITHIN.split(text))


def _negated(text: str, content: set[str]) -> set[str]:
    """The content units a negation in `text` reaches: said after its first negation and not
    before it ("六月去杭州，不去成都" → 成 都; "live in beijing, not shanghai" → shanghai)."""
    def blank(m: re.Match) -> str:
        return " " * len(m.group(0))
    masked = _NOT_NEG_ZH.sub(blank, _NOT_NEG_EN.sub(blank, text))
    found = [m.start() for m in (_NEG_EN.search(masked), _NEG_ZH.search(masked)) if m]
    if not found:
        return set()
    at = min(found)
    before = {u for u, where in _units(text) if where < at and u in content}
    return {u for u, where in _units(text) if where >= at and u in content} - before


# ----------------------------------------------------------------- the fact

@dataclass(frozen=True)
class _Fact:
    negative: bool
    wish: bool
    past: bool
    words: tuple[str, ...]   # stemmed Latin content words
    chars: tuple[str, ...]   # Chinese content characters
    strict: tuple[str, ...]  # numbers and names: each must be said
    negated: frozenset[str] = frozenset()  # the content units its negation reaches
    text: str = ""  # the fact, normalised: its words as written (for _mask_words)
    verb: str = ""  # a Chinese fact's verb (吃 in 用户吃猕猴桃): it must be said


# A Chinese fact is read character by character, so "用户吃猕猴桃" would be three quarters
# said by "我对猕猴桃过敏" (being allergic is not eating it): its verb must be said, as an
# English fact of two words must be said whole.
_VERB_ZH = re.compile(r"^\s*(?:不|没有|没)?([吃喝抽用看有穿开骑玩听])(?=[\u4e00-\u9fff])")


def _fact(text: str) -> _Fact:
    plain = _ADVERBS_FACT.sub(" ", _WHO_FACT.sub(" ", _normal(text)))
    plain = re.sub(r"\b(?:i'm|i've|i'd|i'll|im|i|my|me|myself|mine)\b", " ", plain)
    negative = _says_no(plain)
    stripped = _NOT_NEG_ZH.sub(" ", _NEG_ZH.sub(" ", plain))
    # a hyphenated word is read as its parts, as the user's clauses are ("gluten-free")
    parts = [p for w in _LATIN.findall(stripped) for p in (w.split("-") if "n't" not in w else [w])]
    parts = [re.sub(r"['’]s$", "", p) for p in parts]  # driver's license: driver, license
    words = tuple(dict.fromkeys(_stem(w) for w in parts
                                if len(w.strip("'-")) > 1 and w.strip("'-") not in _FRAME_EN
                                and not _NEG_EN.fullmatch(w) and not w.endswith("n't")))
    chars = tuple(dict.fromkeys(c for c in _HAN.findall(stripped) if c not in _FRAME_ZH))
    original = unicodedata.normalize("NFKC", text)
    names = [w.lower() for i, w in enumerate(re.findall(r"[A-Za-z]+", original))
             if w[0].isupper() and i > 0 and w.lower() not in _NOT_NAMES
             and w.lower() not in ("user", "xiaoming")]
    addresses = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+|www\.\S+", original.lower())
    strict = tuple(dict.fromkeys([*re.findall(r"\d+", _numbers(original)), *map(_stem, names),
                                  *addresses]))
    negated = _negated(plain, {*words, *chars}) if negative else set()
    verb = _VERB_ZH.match(plain)
    return _Fact(negative, bool(_WISH.search(plain)),
                 bool(_PAST.search(plain) or _THEN.search(plain)), words, chars,
                 strict, frozenset(negated), plain, verb.group(1) if verb and verb.group(1) in chars else "")


# ----------------------------------------------------------------- the user's clauses

@dataclass
class _Clause:
    text: str          # normalised
    mode: str | None   # None: a plain statement; else the REASONS key that rules it out
    inherited: bool    # the clause before it was about the user (for a clause with no subject)
    flip: bool = False  # the user answered "no" to it (an answer to the assistant's question)
    sentence: int = -1  # which sentence of the conversation it is in (-1: an answer)
    past: bool = False  # it tells the past, and the message says what holds now
    then: bool = False  # it tells of a time that is over (_THEN), and says no "now"
    corrects: bool = False  # its message corrects what the user said (actually, 说错了 …)


def _clauses(content: str, first_sentence: int = 0) -> list[_Clause]:
    """The message's clauses, each with what rules it out as a statement (its mode)."""
    normal = _normal(content)
    message_mode = "injection" if _INJECTION.search(normal) else \
        "small_talk" if _JOKE.search(normal) else None
    contrast = bool(_NOW.search(normal))
    rejected = bool(_REJECT.search(normal))
    corrected = bool(_CORRECTION.search(normal))
    out: list[_Clause] = []
    about_user = True
    topic = ""
    sentences = _SENTENCES.findall(normal)
    for number, sentence in enumerate(sentences, start=first_sentence):
        sentence = sentence.strip()
        if not sentence:
            continue
        if _TOPIC.fullmatch(sentence) and number - first_sentence + 1 < len(sentences):
            topic = sentence.rstrip("?？ ")  # "Coffee? I never touch the stuff.": a topic
            continue                          # asked, then said of: it begins the next one
        sentence, topic = (f"{topic} {sentence}" if topic else sentence), ""
        quoted = [m.group(0) for m in _QUOTES.finditer(sentence)]
        bare = _QUOTES.sub(" ", sentence)
        mode = message_mode or _sentence_mode(bare)
        tail = None  # "My beagle chewed my charger again, any tips?": only the tail asks
        if mode == "question" and not message_mode:
            parts = [p for p in _CLAUSES.split(bare) if p.strip(" .!?。！？-–—")]
            if len(parts) > 1 and _ASKS_HELP.match(parts[-1].strip(" .!?。！？-–—")) \
                    and _sentence_mode(" ".join(parts[:-1])) is None:
                mode, tail = None, parts[-1].strip(" .!?。！？-–—")
        for quote in quoted:
            out.append(_Clause(quote.strip("\"“”「」『』‘’' "), "quoted", False))
        reported = told = False
        for piece in _CLAUSES.split(bare):
            piece = piece.strip(" .!?。！？-–—")
            if not piece:
                continue
            clause_mode = "question" if piece == tail else mode
            if clause_mode is None and not _SMALL_TALK.sub("", piece).strip(" ,.!~～"):
                clause_mode = "small_talk"
            if clause_mode is None and (reported or _HEARSAY.search(piece)):
                clause_mode = "quoted"
            if clause_mode is None and told and _last_subject(piece) is None:
                clause_mode = "quoted"  # 算命先生说我命里缺水，适合做…: the report goes on
            if clause_mode is None and corrected and _SAID_BEFORE.match(piece):
                clause_mode = "quoted"  # what the user takes back is not what they say now
            if clause_mode is None and rejected and quoted:
                clause_mode = None  # the user's own comment on a quote they reject
            out.append(_Clause(piece, clause_mode, about_user, sentence=number,
                               corrects=corrected,
                               past=contrast and not _NOW.search(piece)
                               and bool(_PAST.search(piece))
                               and not _PAST_NEG.search(piece),
                               then=bool(_THEN.search(piece)) and not _NOW.search(piece)
                               and not _STILL.search(piece)))
            subject = _last_subject(piece)
            if subject is not None:
                about_user = subject
            if re.match(r"according to\b|据|按照", piece):
                reported = True
                continue
            says = _SAYS.search(piece)
            if says and not piece[says.end():].strip(" ,:：\"“"):
                # "my doctor said:" … the rest of the sentence is reported
                reported = not _user_speaks(piece[:says.start()])
            elif says:  # "X says I …, …": what follows with no subject of its own is X's too
                told = not _user_speaks(piece[:says.start()])
            elif subject is not None:
                told = False
    return out


# The one who says it is the user only when "I" or "we" says it: "my doctor says", "my
# horoscope says" are someone else's words although "my" is the user's.
_SPEAKER_ME = re.compile(r"(?:\b(?:i|we)|我们|我|咱们|咱)(?:\s*(?:\w+ly|also|always|often|"
                         r"just|once|even|still|keep|kept|have|had|do|did|也|还|总|总是|常|"
                         r"一直|经常|也是|都|刚才|刚刚|之前))*\s*$")


def _user_speaks(before: str) -> bool:
    """Is the speaker of a "says" the user: the words right before it are I / we / 我?"""
    return bool(_SPEAKER_ME.search(before.rstrip(" ,，")))


# "Wait, I said Tuesday but it's actually Thursday": the user's own earlier words, taken back.
_CORRECTION = re.compile(r"\bactually\b|\bi meant\b|\bi mean\b|\bcorrection\b|\bscratch that\b|"
                         r"\bmy (?:bad|mistake)\b|\bsorry\b|\bwrong\b|说错|更正|纠正|其实是|不对|"
                         r"搞错|记错|口误")
_SAID_BEFORE = re.compile(r"^(?:\w+ )?(?:i (?:said|wrote|told you|typed|put)|我(?:刚才|刚刚|之前|前面|上面)?"
                          r"(?:说|写|打)(?:的是|了|成|过)?)")


def _sentence_mode(sentence: str) -> str | None:
    if _SUPPOSE.search(sentence):  # "假如我是素食者，吃什么好？" supposes first
        return "hypothetical"
    if _QUESTION_END.search(sentence) or _QUESTION_START.search(sentence.strip()) \
            or _QUESTION_ZH.search(sentence):
        return "question"
    return None


_TOGETHER = re.compile(r"我(?:和|跟|与|同)[\u4e00-\u9fff]{1,6}?(?:都|一起|俩|两个|两人)|"
                       r"[\u4e00-\u9fff]{1,6}?(?:和|跟|与)我(?:都|一起|俩|两个|两人)?|"
                       r"\b(?:and|&) (?:i|me)\b(?: both)?|\bboth of us\b")


_WORKPLACE = re.compile(r"在[^，,。]{0,12}?(?:公司|单位|医院|学校|银行|工厂|店里|厂里)")
_COPULA = re.compile(r"(?<![还就但总可于要只倒硬真])是(?!不是)|当了|当过|成为|作为|"
                     r"\b(?:am|is|are|was|were|be|become|became)\b|'m\b|'re\b|(?<=[a-z])'s\b(?= (?:a|an)\b)")


def _last_subject(text: str) -> bool | None:
    """True: the last subject in `text` is the user (I, my, we, 我; "我和老公都", "my wife
    and I"); False: someone else (my friend, she, 我妈, 小王, the user in the third
    person); None: none named."""
    text = _TOGETHER.sub(" 我们 ", text)
    text = _WORKPLACE.sub("在某处", text)  # "我在一家做芯片的公司当…": a place, not a subject
    copula = _COPULA.search(text)
    text = text[:copula.start()] if copula and copula.start() else text  # "我是老师": 我
    last_me = max((m.end() for m in _ME.finditer(text)), default=-1)
    last_other = max((m.end() for m in _OTHER.finditer(text)), default=-1)
    if last_me < 0 and last_other < 0:
        return None
    return last_me >= last_other


def _units(text: str) -> list[tuple[str, int]]:
    """The clause's words (stemmed) and Chinese characters, with where each starts."""
    return [(_stem(m.group(0)) if not _HAN.match(m.group(0)) else m.group(0), m.start())
            for m in _UNIT.finditer(text)]


# A breed says the animal: "our beagle" says "The user has a dog" (as 金毛 says 狗, _SAME).
_KINDS = {"dog": ("retriever", "labrador", "beagle", "husky", "huskies", "corgi", "poodle",
                  "dachshund", "terrier", "spaniel", "bulldog", "collie", "shiba", "samoyed",
                  "greyhound", "schnauzer", "chihuahua", "puppy", "pup"),
          "cat": ("tabby", "siamese", "ragdoll", "maine coon", "sphynx", "kitten")}


def _zh_for() -> dict[str, list[str]]:
    """An English word's stem → the words that say it in a clause: its Chinese words
    (_LEXICON), and for "dog" and "cat" their breeds (_KINDS)."""
    found: dict[str, list[str]] = {}
    for zh, ens in _LEXICON:
        for en in ens:
            found.setdefault(_stem(en), []).append(zh)
    for animal, breeds in _KINDS.items():
        found.setdefault(_stem(animal), []).extend(breeds)
    return found


def _cover(fact: _Fact, clause: str) -> tuple[float, int]:
    """The share of the fact's content the clause says, and where the first of it starts."""
    units = _units(clause)
    words = {}
    for unit, at in units:
        words.setdefault(unit, at)
    first, said = len(clause), 0
    for word in fact.words:
        at = words.get(word)
        if at is None:  # a Chinese word for it ("过敏" for "allergic")
            at = next((clause.find(zh) for zh in _ZH_FOR.get(word, ()) if zh in clause), None)
        if at is not None:
            said += 1
            first = min(first, at)
    fact_text = "".join(fact.chars)
    # a character inside a word the fact does not say is not the fact's: 车 in 电动车
    own = _mask_words(clause, fact.text)
    verb_said = not fact.verb
    for char in fact.chars:
        at = own.find(char)
        if at < 0:  # an English word for it ("vegetarian" for "素食")
            at = next((words[en] for zh, ens in _LEXICON if char in zh and zh in fact_text
                       for en in map(_stem, ens) if en in words), -1)
        if at >= 0:
            said += 1
            first = min(first, at)
            verb_said = verb_said or char == fact.verb
    total = len(fact.words) + len(fact.chars)
    if not total:
        return 0.0, first
    if total <= SHORT and said < total:  # a short fact is said whole, or not at all
        return 0.0, first
    if not verb_said:
        return 0.0, first
    if any(s not in words and s not in clause and not any(
            zh in clause for zh in _ZH_FOR.get(s, ())) for s in fact.strict):
        return 0.0, first
    return said / total, first


_ZH_WORDS = sorted({zh for zh, _ens in _LEXICON if len(zh) >= 2}, key=len, reverse=True)


def _mask_words(clause: str, fact_text: str) -> str:
    """The clause with each lexicon word the fact does not hold blanked
    out (same length): "现在每天骑电动车上班" does not say the 车 of "用户没有车"."""
    for zh in _ZH_WORDS:
        if zh in clause and zh not in fact_text:
            clause = clause.replace(zh, "\u3000" * len(zh))
    return clause


def _whose(clause: _Clause, first: int) -> bool:
    """Is the clause, up to its content, about the user?"""
    before = clause.text[:first]
    before = _REQUEST.sub(" ", before) if before.strip() else before
    subject = _last_subject(before)
    if subject is None:
        said = [w for w in re.findall(r"\b[a-z][a-z-]*\b", before) if w not in STOP_WORDS
                and w not in _NOT_NAMES and w not in _FRAME_EN and not w.endswith("ly")]
        if said:  # English names its subject: "Jack from work is …" is Jack
            return False
        bare = _FILLER_ZH.sub("", _NEG_ZH.sub("", before)).strip()
        if _SURNAME.match(bare):  # "王芳每天喝咖啡": a name before the content
            return False
        return clause.inherited
    return subject


_SURNAME = re.compile(r"^[王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡"
                      r"余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷"
                      r"侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤][\u4e00-\u9fff]{1,2}$")
_FILLER_ZH = re.compile(r"也|都|还|就|已经|一直|现在|目前|平时|其实|真的|从来|一点|说实话|对了|嗯|是|的|在|"
                        r"每天|最近|本来|一般|通常|特别|非常|很|比较|有点|总是|经常|偶尔|确实|今年|"
                        r"去年|早就|根本|完全|实在|老实说|坦白说")


_NAME_NEXT = re.compile(r"^(?:['’]s\b|\s*,|\s+(?:is|was|has|does|doesn't|isn't|and|also|"
                        r"never|always|still|just|really|[a-z]+s)\b)")


def _capitalised_names(original: str) -> set[str]:
    """Capitalised words that look like names: inside a sentence (not its first word), or
    first and followed by 's, a comma or a verb of the third person ("Tom lives …")."""
    found = set()
    for sentence in re.split(r"[.!?。！？\n]", original):
        for i, m in enumerate(re.finditer(r"[A-Za-z][A-Za-z-]*", sentence)):
            word = m.group(0)
            lower = word.lower()
            if not word[0].isupper() or word == "I" or lower in _NOT_NAMES \
                    or lower in STOP_WORDS or lower.endswith("ly"):
                continue
            if i > 0 or _NAME_NEXT.match(sentence[m.end():]):
                found.add(lower)
    return found


def _verdict(fact: _Fact, clause: _Clause, first: int, names: set[str]) -> str:
    """What this clause, which says the fact's content, makes of it (a REASONS key)."""
    if clause.mode is not None:
        return clause.mode
    before = clause.text[:first]
    # the fact said before a "says", or after it: a character of the speaker may be the
    # fact's too (算命的说我命里缺水: 命 is in both), so what follows the "says" decides
    says = next((m for m in _SAYS.finditer(clause.text) if m.start() < first
                 or _cover(fact, clause.text[m.end():])[0] >= COVERAGE), None)
    if says and not _user_speaks(clause.text[:says.start()]):
        return "quoted"  # "my doctor says I'm …", "the email says I won …"
    if re.search(r"\bthe user\b|用户", before):
        return "injection"
    mine = _whose(clause, first)
    named = [w for w in re.findall(r"[a-z][a-z-]*", before) if w in names]
    if not mine or (named and _last_subject(before) is not True):
        return "someone_else"
    if _cleft_other(fact, clause.text, first):
        return "someone_else"  # "对海鲜过敏的是我姐", "the one who's allergic is my sister"
    start = max((m.end() for m in _WITHIN.finditer(clause.text[:first])), default=0)
    said = clause.text[start:_end(fact, clause.text, first)]
    if _says_no(said) != (fact.negative ^ clause.flip ^ (clause.past and not fact.past)):
        return "negation"  # the opposite, even said of today, is never stored
    reached = _negated(said, set(fact.negated) | set(fact.words) | set(fact.chars))
    if fact.negated and reached and not reached & fact.negated and not clause.flip:
        return "negation"  # "去杭州，不去成都" is not "去成都，不去杭州": the "not" is on the other
    if _REQUEST.search(clause.text) and not _REMEMBER.search(clause.text) \
            and not _LASTING.search(clause.text) \
            and _last_subject(_REQUEST.sub(" ", before)) is not True:
        return "one_off"
    if (_ONE_OFF.search(clause.text) or _PASSING.search(clause.text)) \
            and not _LASTING.search(clause.text):
        return "one_off"
    if _WISH.search(said) and not fact.wish:
        return "hypothetical"
    if clause.then and not fact.past and not _says_no(said):
        return "past"  # "I was a barista in college" is not "The user is a barista"
    return "said"


# A cleft names who it is after the content: "对海鲜过敏的是我姐" (the one allergic to seafood
# is my sister), "the one who's allergic to cats is my wife".
_CLEFT_ZH = re.compile(r"^\s*的(?:人|那个人?|那位|那一个)?(?:其实|就|才|倒)?是")
_CLEFT_EN = re.compile(r"\b(?:the (?:one|only one|person|people|ones)|whoever|someone) "
                       r"(?:who|that)\b")
_CLEFT_EN_IS = re.compile(r"^[^,]*?\b(?:is|are|was|were)\b(?: (?:actually|really|just))?")


def _cleft_other(fact: _Fact, clause: str, first: int) -> bool:
    """Does the clause say the content first, then that someone else is the one?"""
    end = _end(fact, clause, first)
    rest = clause[end:]
    found = _CLEFT_ZH.match(rest)
    if not found and _CLEFT_EN.search(clause[:first]):
        found = _CLEFT_EN_IS.match(rest)
    return bool(found) and _last_subject(rest[found.end():]) is False


# Inside a clause, a negation before these does not reach past them: "我不抽烟也喝酒",
# "I'm vegetarian and don't drink" (each side keeps its own).
_WITHIN = re.compile(r"[,，]|也|又|还|并且|而且|同时|\band\b|\bbut\b|\bso\b|\bbecause\b|因为|所以")


def _end(fact: _Fact, clause: str, first: int) -> int:
    """Where the fact's content ends in the clause (its last word or character said), and
    any negation right after it ("吃不了" aside, a "not" after the content is rare)."""
    end = first
    for m in _UNIT.finditer(clause):
        unit = m.group(0) if _HAN.match(m.group(0)) else _stem(m.group(0))
        if unit in fact.words or unit in fact.chars:
            end = max(end, m.end())
    for word in fact.words:  # said in Chinese: "不耐受" for "intolerant"
        for zh in _ZH_FOR.get(word, ()):
            at = clause.find(zh)
            if at >= 0:
                end = max(end, at + len(zh))
    tail = re.match(r"\s*(?:n't|not|never|不了|不到|不起|不下|不惯|不动|不着)", clause[end:])
    end += tail.end() if tail else 0
    rest = clause[end:]
    cut = _WITHIN.search(rest)
    rest = rest[:cut.start()] if cut else rest
    if _negative(rest) and not _content(_NEG_ZH.sub(" ", rest)) - _PLACEHOLDERS:
        return end + len(rest)  # the rest only comments on it, and says no
    return end


# Words that stand for the content in a comment on it: "isn't something I do", "这事我不会",
# "猪肉相关的都不行", "辣的这类都不行" (行 of 不行).
_PLACEHOLDERS = {"something", "anything", "thing", "stuff", "someth", "anyth", "事", "东", "西",
                 "种", "样", "相", "关", "类", "行",
                 "真", "实", "确", "根", "本", "完", "全", "太", "可"}  # 喝酒我是真不行


_ZH_FOR = _zh_for()  # an English word's stem → the Chinese words for it


# ----------------------------------------------------------------- answers to the assistant

def _answer(question: str, answer: str) -> tuple[str, bool] | None:
    """The statement a short answer makes of the assistant's question, in the user's
    words, and whether the answer said no: "Do you eat fish?" "No." → ("i eat fish",
    True); "你吃辣吗？" "不吃。" → ("我吃辣", True); "Which city do you live in?"
    "Hangzhou." → ("hangzhou city i live in", False)."""
    q = _normal(question).strip()
    a = _normal(answer).strip(" .!。！")
    if not _QUESTION_END.search(q) or len(a) > 40:
        return None
    last = [s.strip() for s in _SENTENCES.findall(q) if s.strip()]
    q = last[-1] if last else q
    no = bool(_NO.match(a)) or _negative(a)
    yes = bool(_YES.match(a))
    body = re.sub(r"[?？]\s*$", "", q)
    body = re.sub(r"(?:吗|呢|么)$", "", body)
    zh = bool(_HAN.search(body)) and not re.search(r"\b(?:i|my)\b", body)
    body = re.sub(r"\b(?:you're|you are|you)\b", " i ", body)
    body = re.sub(r"\byour\b", " my ", body)
    body = body.replace("您", "我").replace("你", "我")
    body = re.sub(r"^(?:do|does|did|are|am|is|have|has|can|will|would)\s+", "", body.strip())
    wh = re.search(r"\b(?:what|which|where|who|how|when)\b|什么|哪里|哪儿|哪|谁|怎么|多少|"
                   r"几(?:点|个|岁|天|号|次|年|月)?", body)
    if wh:  # the answer fills the gap: "Which city do you live in?" "Hangzhou."
        if no or not a:
            return None
        filled = body[:wh.start()] + " " + a + " " + body[wh.end():]
        return re.sub(r"\b(?:do|does|did)\b", " ", filled), False
    if not (yes or no):
        return None
    if zh:
        return body, no
    return "i " + re.sub(r"^i\s+", "", body.strip()), no


# ----------------------------------------------------------------- the policy

def _text(content: object) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content
                        if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else ""


def user_clauses(messages: Iterable[Mapping]) -> list[_Clause]:
    """Every clause of the user's messages, each with its mode; a short answer to the
    assistant's question adds the statement it makes."""
    out: list[_Clause] = []
    before: str | None = None
    for message in messages:
        role, content = message.get("role"), _text(message.get("content"))
        if role == "assistant":
            before = content
            continue
        if role != "user":
            before = None
            continue
        if before:
            said = _answer(before, content)
            if said:
                out.append(_Clause(said[0], "injection" if _INJECTION.search(_normal(content))
                                   else None, True, flip=said[1]))
        out.extend(_clauses(content, first_sentence=max((c.sentence for c in out),
                                                        default=-1) + 1))
        before = None
    return out


_RANK = ["said", "negation", "corrected", "past", "someone_else", "quoted", "injection", "question",
         "hypothetical", "one_off", "small_talk"]


def judge(fact: str, messages: Iterable[Mapping]) -> Verdict:
    """Does the user's own conversation support `fact` as the user's fact? The clause that
    says the most of it decides (the first, of equals); a clause that says it plainly, of
    the user, with the same yes or no, wins over every other."""
    wanted = _fact(fact)
    if not (wanted.words or wanted.chars):
        return Verdict(False, "not_said")
    messages = list(messages)
    names = set()
    for message in messages:
        if message.get("role") == "user":
            names |= _capitalised_names(_text(message.get("content")))
    best: tuple[float, int, str, str] | None = None
    decisive: list[tuple[str, str]] = []  # the clauses that say it, or its opposite, in order
    clauses = user_clauses(messages)
    for clause in _candidates(wanted, clauses):
        share, first = _cover(wanted, clause.text)
        if share < COVERAGE:
            continue
        reason = _verdict(wanted, clause, first, names)
        if reason == "said" and any(_replaces(wanted, clause, later) for later in clauses):
            reason = "corrected"  # "I live in Austin." "Actually we moved to Dallas."
        if reason in ("said", "negation", "corrected"):
            decisive.append((reason, clause.text))
        key = (share, -_RANK.index(reason), reason, clause.text)
        if best is None or key[:2] > best[:2]:
            best = key
    if decisive:
        return _newest(decisive)
    if best is None:
        return Verdict(False, "not_said")
    return Verdict(False, best[2], best[3])


# What says a fact changed: the newer of two statements that disagree wins only with one.
_CHANGE = re.compile(r"\b(?:now|these days|nowadays|again|anymore|any more|no longer|started|"
                     r"switched|became|since)\b|现在|如今|目前|又|重新|开始|后来|不再|已经")


_ALSO = re.compile(r"\b(?:also|too|as well|another)\b|也|还|又|另外")


def _content(text: str) -> set[str]:
    """A clause's content units: its words (stemmed, no stop words, no "not") and Chinese
    characters (not the frame's)."""
    return {u for u, _at in _units(text)
            if u not in _FRAME_EN and u not in STOP_WORDS and u not in _FRAME_ZH
            and not _NEG_EN.fullmatch(u) and not u.endswith(("n't", "n’t"))}


def _replaces(fact: _Fact, clause: _Clause, later: _Clause) -> bool:
    """Does a later sentence of the user correct or update what `clause` says of the fact:
    the same thing with another value, after "actually", "sorry", 说错了, "now", "moved" …
    ("I live in Austin." "Actually we just moved to Dallas." takes back Austin; "我住在北京。"
    "不好意思说错了，我住在天津。" takes back 北京)? Not when it adds ("I also live in …")."""
    if later.sentence <= clause.sentence or clause.sentence < 0 or later.mode is not None \
            or not (later.corrects or _CHANGE.search(later.text)) or _ALSO.search(later.text):
        return False
    if _last_subject(later.text) is False or _negative(later.text) != _negative(clause.text):
        return False
    said, now = _content(clause.text), _content(later.text)
    facts = set(fact.words) | set(fact.chars)
    kept = said & now & facts          # the thing: live, 住
    dropped = (said - now) & facts     # its old value: austin, 北京
    added = now - said                 # its new value: dallas, 天津
    return bool(kept) and bool(dropped) and bool(added - facts)


def _newest(decisive: list[tuple[str, str]]) -> Verdict:
    """When the user's clauses agree, that is the answer. When they disagree, the newer one
    wins if it says that things changed ("我去年把车卖了，现在没车"); else a plain "not"
    wins over a looser match without one ("I don't have a car, 我一般打车"), and anything
    else said both ways is refused: a negation is never stored as its opposite."""
    reason, clause = decisive[-1]
    kinds = {r for r, _ in decisive}
    if len(kinds) == 1 or _CHANGE.search(clause):
        return Verdict(reason == "said", reason, clause)
    said = [c for r, c in decisive if r == "said"]
    opposite = [(r, c) for r, c in decisive if r != "said"]  # negated, or taken back
    if all(_negative(c) for c in said) and not any(_negative(c) for _r, c in opposite):
        return Verdict(True, "said", said[-1])  # "I don't have a car, 我一般打车": the "not" is meant
    return Verdict(False, *opposite[-1])


def _candidates(fact: _Fact, clauses: list[_Clause]) -> list[_Clause]:
    """The clauses, and two neighbours of one sentence joined where the fact spans them
    ("我在读研二，专业是计算机"): both plain, and the second not about someone else. Where the
    first alone already says most of the fact but the two together say more of it ("我们决定
    六月去杭州，不去成都了" for that very fact), the pair stands in for the first: its yes or no
    is the pair's, not the first clause's alone."""
    out = []
    for i, clause in enumerate(clauses):
        out.append(clause)
        after = clauses[i + 1] if i + 1 < len(clauses) else None
        if after is None or after.sentence != clause.sentence or clause.sentence < 0 \
                or clause.mode or after.mode:
            continue
        alone = max(_cover(fact, clause.text)[0], _cover(fact, after.text)[0])
        joined = _Clause(clause.text + "，" + after.text, None, clause.inherited,
                         sentence=clause.sentence)
        together = _cover(fact, joined.text)[0]
        if alone >= COVERAGE and together <= alone:
            continue
        share, first = _cover(fact, after.text)
        if share and _last_subject(after.text[:first]) is False:
            continue
        if alone >= COVERAGE:
            out[-1] = joined  # the fact goes on into the next clause: judge the pair
        else:
            out.append(joined)
    return out


def supports(fact: str, messages: Iterable[Mapping]) -> bool:
    """True when the user's own messages say `fact` of the user (judge(...).stored)."""
    return judge(fact, messages).stored
