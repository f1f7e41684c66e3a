"""The self-checks of notebook 06's exercises (the predictions, the two-step chain): each
passes a correct answer, fails the wrong ones with the hint that fits, and never raises at the
learner. The build (my_loop) is tested in tests/test_core_track_nb06.py."""

from __future__ import annotations

import json

import pytest
from check_support import expect_fail, expect_pass, in_both_languages, twin

from lesson_lib.exercises import nb06
from lesson_lib.i18n import by_language
from lesson_lib.tools import (
    TIME_TOOL,
    WEATHER_TOOL,
    ToolRegistry,
    get_current_time,
    get_current_weather,
)

# Each answer is built twice (check_support.twin): with the English edition's data, and with
# the Chinese edition's, which a Chinese learner's notebook holds; the check must judge both
# the same way, with the same report in each language.
DISHES_EN = {"Beijing": "Peking duck", "Shanghai": "xiaolongbao (soup dumplings)",
             "Chengdu": "mapo tofu"}
DISHES_ZH = {"北京": "北京烤鸭", "上海": "小笼包", "成都": "麻婆豆腐"}


def dishes() -> dict[str, str]:
    return by_language(DISHES_EN, DISHES_ZH)


def test_checks_need_no_model_whatever_the_notebook_backend(monkeypatch, capsys):
    from lesson_lib import llm

    previous = llm.set_client(None)
    try:
        monkeypatch.setenv("LESSON_BACKEND", "openai")  # no key: a real client would fail
        expect_pass(nb06.check_predictions, twin(lambda: dict(RIGHT)), capsys)
        expect_pass(nb06.check_two_step_chain, twin(lambda: registry_with(get_local_dish)),
                    capsys)
        assert llm._client is None, "the check must restore the shared client it replaced"
    finally:
        llm.set_client(*previous)


# ----------------------------------------------------------------- exercise 1: predictions

RIGHT = {"a": 1, "b": 2, "c": 3, "d": 2, "e": 4}


def test_predictions_pass_with_the_real_counts(capsys):
    expect_pass(nb06.check_predictions, twin(lambda: dict(RIGHT)), capsys)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_predictions_match_what_loop_agent_really_does(lang, speak):
    speak(lang)
    for key, (question, max_turns) in nb06.PREDICTION_QUESTIONS.items():
        got = nb06.model_calls(question, max_turns)
        assert got == RIGHT[key], f"({key}) {question}: expected {RIGHT[key]} calls, got {got}"


def test_the_chinese_edition_asks_its_own_questions(speak):
    speak("zh")
    assert nb06.PREDICTION_QUESTIONS["e"] == ("一直查成都的天气，直到晴天为止。", 4)
    assert nb06.DISH_QUESTION == "北京和上海哪个更冷？在那里我该尝尝什么当地菜？"
    assert (nb06.COLDER, nb06.DISHES_NAMED) == ("北京", "北京烤鸭")
    speak("en")
    assert nb06.PREDICTION_QUESTIONS["e"] == (
        "Keep checking the weather in Chengdu until it is sunny.", 4)
    assert (nb06.COLDER, nb06.DISHES_NAMED) == ("Beijing", "Peking duck")


def test_predictions_stub_is_reported_as_not_answered(capsys):
    out = expect_fail(nb06.check_predictions, twin(lambda: dict.fromkeys(RIGHT, ...)), capsys,
                      "not answered yet", "replace ... with a whole number")
    assert out.count("❌ (") == 5, f"expected five ❌ lines, got:\n{out}"


def test_predictions_wrong_answers_get_their_own_hints(capsys):
    wrong = {**RIGHT, "b": 5, "c": 2, "e": 5}
    out = expect_fail(nb06.check_predictions, twin(lambda: wrong), capsys,
                      "5 model calls? It takes fewer", "parallel calls share one assistant",
                      "2 model calls? It takes more", "a chain",
                      "count what max_turns allows")
    assert out.count("❌ (") == 3, f"expected three ❌ lines, got:\n{out}"


@pytest.mark.parametrize("answer, hint", [
    ([1, 2, 3, 2, 4], "is a dict"),
    ({**RIGHT, "a": True}, "is not a whole number"),
    ({**RIGHT, "d": "2"}, "is not a whole number"),
    ({k: v for k, v in RIGHT.items() if k != "c"}, "(c) Which is colder"),
])
def test_predictions_odd_answers_are_reported_not_raised(answer, hint, capsys):
    expect_fail(nb06.check_predictions, twin(lambda: answer), capsys, hint)


# ----------------------------------------------------------------- exercise 2: the chain

def get_local_dish(city: str) -> str:
    """Use this when the user asks what local dish or food a city is famous for.

    Args:
        city: City name, e.g. Chengdu.
    """
    return json.dumps({"city": city, "dish": dishes().get(city, "unknown")})


def city_info(city: str) -> str:
    """Returns data about a city."""
    return json.dumps({"city": city, "dish": dishes().get(city, "unknown")})


def registry_with(*tools) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(get_current_weather, WEATHER_TOOL)
    for fn in tools:
        registry.register(fn)
    return registry


def test_two_step_chain_passes_with_a_well_described_tool(capsys):
    runs = in_both_languages(nb06.check_two_step_chain,
                             twin(lambda: registry_with(get_local_dish)), capsys)
    (en_passed, en), (zh_passed, zh) = runs["en"], runs["zh"]
    assert en_passed and "turn 2: get_local_dish ran for Beijing" in en and "Peking duck" in en
    assert zh_passed and "get_local_dish" in zh and "北京" in zh and "北京烤鸭" in zh, zh


def test_two_step_chain_takes_any_name_for_the_city(capsys):
    def dish_for(place: str) -> str:
        """Use this when the user wants a local dish or food to try in a city.

        Args:
            place: the city, e.g. Beijing
        """
        return json.dumps({"dish": dishes().get(place, "unknown")})

    expect_pass(nb06.check_two_step_chain, twin(lambda: registry_with(dish_for)), capsys)


def test_two_step_chain_fails_the_stub_on_its_description_not_on_a_models_choice(capsys):
    out = expect_fail(nb06.check_two_step_chain, twin(lambda: registry_with(city_info)), capsys,
                      "❌ city_info's description says when to use it",
                      "by its name and description only")
    assert "❌ each parameter has a description" in out, out
    assert "✅ turn 2: city_info ran for Beijing" in out, (
        "the stub's tool works: only its schema is wrong")


def test_two_step_chain_needs_the_city_as_the_one_required_parameter(capsys):
    def get_local_dish(city: str, country: str) -> str:
        """Use this when the user asks what local dish a city is famous for.

        Args:
            city: the city, e.g. Beijing
            country: the country, e.g. China
        """
        return dishes()[city]

    expect_fail(nb06.check_two_step_chain, twin(lambda: registry_with(get_local_dish)), capsys,
                "it requires ['city', 'country']: def get_local_dish(city: str)")


def test_two_step_chain_needs_the_dish_in_the_result(capsys):
    def get_local_dish(city: str) -> str:
        """Use this when the user asks what local dish a city is famous for.

        Args:
            city: the city, e.g. Beijing
        """
        return json.dumps({"city": city})

    expect_fail(nb06.check_two_step_chain, twin(lambda: registry_with(get_local_dish)), capsys,
                "look the dish up in DISHES")


def test_two_step_chain_needs_the_weather_tool(capsys):
    def make():
        registry = ToolRegistry()
        registry.register(get_local_dish)
        return registry

    expect_fail(nb06.check_two_step_chain, twin(make), capsys,
                "register(get_current_weather, WEATHER_TOOL)")


def test_two_step_chain_needs_a_tool_of_the_learners_own(capsys):
    def make():
        registry = registry_with()
        registry.register(get_current_time, TIME_TOOL)
        return registry

    expect_fail(nb06.check_two_step_chain, twin(make), capsys, "a tool of your own (none)")


def test_two_step_chain_reports_a_tool_that_fails(capsys):
    def get_local_dish(city: str) -> str:
        """Use this when the user asks what local dish or food a city is famous for.

        Args:
            city: the city, e.g. Beijing
        """
        # a key the table does not have: lower-case in English, "北京市" for 北京 in Chinese
        return dishes()[by_language(city.lower(), city + "市")]

    expect_fail(nb06.check_two_step_chain, twin(lambda: registry_with(get_local_dish)), capsys,
                "it returned an error", "KeyError")


@pytest.mark.parametrize("answer", [None, [get_local_dish], "registry"])
def test_two_step_chain_check_never_raises(answer, capsys):
    expect_fail(nb06.check_two_step_chain, twin(lambda: answer), capsys, "is a ToolRegistry")


# These tests read which cases a check names: every line is printed (conftest.every_line).
pytestmark = pytest.mark.usefixtures("every_line")
