"""The gazetteer finds places in English and Chinese sentences."""

from lesson_lib.places import all_places, find_places, lookup


def names(text):
    return [p.name for p in find_places(text)]


def test_lookup_accepts_english_chinese_aliases_and_case():
    assert lookup("成都").name == lookup("chengdu").name == lookup("成都市").name == "Chengdu"
    assert lookup("NYC").timezone == "America/New_York"
    assert lookup("Atlantis") is None and lookup("") is None


def test_places_come_in_order_of_appearance_each_once():
    assert names("Shanghai and Beijing weather? and Shanghai again") == ["Shanghai", "Beijing"]
    assert names("北京和上海现在哪个更暖和？") == ["Beijing", "Shanghai"]


def test_english_names_match_whole_words_and_longest_first():
    assert names("I love Parisian food") == []
    assert names("new york city at night") == ["New York"]
    assert names("San Francisco, not San Jose") == ["San Francisco"]


def test_every_place_has_a_valid_time_zone():
    import pytz

    for place in all_places():
        pytz.timezone(place.timezone)
