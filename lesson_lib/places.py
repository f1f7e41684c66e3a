"""A small gazetteer: city names in English and Chinese, and their time zones.

Shared by the seed tools (which accept "成都" and "Chengdu" alike) and by the
offline model (which finds places in a learner's sentence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, lru_cache


@dataclass(frozen=True)
class Place:
    name: str                 # English name, the canonical key
    zh: str                   # Chinese name
    timezone: str             # IANA time zone
    aliases: tuple[str, ...] = field(default=())  # other spellings, lower-case or Chinese


_PLACES = (
    Place("Beijing", "北京", "Asia/Shanghai", ("peking", "北京市")),
    Place("Shanghai", "上海", "Asia/Shanghai", ("上海市",)),
    Place("Chengdu", "成都", "Asia/Shanghai", ("成都市",)),
    Place("Guangzhou", "广州", "Asia/Shanghai", ("canton",)),
    Place("Shenzhen", "深圳", "Asia/Shanghai", ()),
    Place("Hangzhou", "杭州", "Asia/Shanghai", ()),
    Place("Wuhan", "武汉", "Asia/Shanghai", ()),
    Place("Xi'an", "西安", "Asia/Shanghai", ("xian",)),
    Place("Chongqing", "重庆", "Asia/Shanghai", ()),
    Place("Nanjing", "南京", "Asia/Shanghai", ()),
    Place("Harbin", "哈尔滨", "Asia/Shanghai", ()),
    Place("Hong Kong", "香港", "Asia/Hong_Kong", ("hongkong",)),
    Place("Taipei", "台北", "Asia/Taipei", ()),
    Place("Tokyo", "东京", "Asia/Tokyo", ()),
    Place("Seoul", "首尔", "Asia/Seoul", ()),
    Place("Singapore", "新加坡", "Asia/Singapore", ()),
    Place("Bangkok", "曼谷", "Asia/Bangkok", ()),
    Place("Mumbai", "孟买", "Asia/Kolkata", ("bombay",)),
    Place("Delhi", "德里", "Asia/Kolkata", ("new delhi", "新德里")),
    Place("Dubai", "迪拜", "Asia/Dubai", ()),
    Place("Moscow", "莫斯科", "Europe/Moscow", ()),
    Place("London", "伦敦", "Europe/London", ()),
    Place("Paris", "巴黎", "Europe/Paris", ()),
    Place("Berlin", "柏林", "Europe/Berlin", ()),
    Place("Madrid", "马德里", "Europe/Madrid", ()),
    Place("Rome", "罗马", "Europe/Rome", ()),
    Place("Cairo", "开罗", "Africa/Cairo", ()),
    Place("Nairobi", "内罗毕", "Africa/Nairobi", ()),
    Place("New York", "纽约", "America/New_York", ("nyc", "new york city")),
    Place("San Francisco", "旧金山", "America/Los_Angeles", ("三藩市",)),
    Place("Los Angeles", "洛杉矶", "America/Los_Angeles", ()),
    Place("Chicago", "芝加哥", "America/Chicago", ()),
    Place("Toronto", "多伦多", "America/Toronto", ()),
    Place("Mexico City", "墨西哥城", "America/Mexico_City", ()),
    Place("São Paulo", "圣保罗", "America/Sao_Paulo", ("sao paulo",)),
    Place("Sydney", "悉尼", "Australia/Sydney", ()),
)


@cache
def _index() -> dict[str, Place]:
    index: dict[str, Place] = {}
    for p in _PLACES:
        for key in (p.name.lower(), p.zh, *p.aliases):
            index[key.lower()] = p
    return index


def lookup(name: str) -> Place | None:
    """The place called `name` (English or Chinese, any case), or None."""
    return _index().get(name.strip().lower()) if name else None


@cache
def _pattern() -> re.Pattern:
    """One regex for every name, longest first: English names as whole words,
    Chinese names anywhere (Chinese has no spaces)."""
    keys = sorted(_index(), key=len, reverse=True)
    alternatives = [rf"(?<![a-z]){re.escape(k)}(?![a-z])" if re.fullmatch(r"[a-z' .]+", k)
                    else re.escape(k) for k in keys]
    return re.compile("|".join(alternatives))


def place_spans(text: str) -> list[tuple[int, int, Place]]:
    """Where places are named in `text`: (start, end, place), in order, every mention."""
    return [(m.start(), m.end(), _index()[m.group(0)]) for m in _pattern().finditer(text.lower())]


def find_places(text: str) -> list[Place]:
    """Places named in `text`, in the order they appear, each once.

    English names match whole words ("la" does not match "Xiaoming's plan");
    Chinese names match anywhere.
    """
    return list(_find_places(text))


@lru_cache(maxsize=4096)
def _find_places(text: str) -> tuple[Place, ...]:
    ordered: list[Place] = []
    for match in _pattern().finditer(text.lower()):
        place = _index()[match.group(0)]
        if place not in ordered:
            ordered.append(place)
    return tuple(ordered)


def all_places() -> tuple[Place, ...]:
    return _PLACES
