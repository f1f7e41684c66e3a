"""The user's profile, kept by the model through a tool: remember_preference, the offline
model that calls it for lasting preferences (English and Chinese) and reads the profile
back from the system prompt, and the Agent that joins the two across sessions.

Everything goes through the real openai SDK against the offline model (offline_client()),
and the profile lives in a SQLite session store in a temporary folder.
"""

from __future__ import annotations

import json

import pytest

from lesson_lib.agent import SYSTEM_PROMPT, Agent, LoopAgent, system_prompt_with
from lesson_lib.llm import chat
from lesson_lib.offline import offline_client
from lesson_lib.offline import understand as u
from lesson_lib.profile import PROMPT_HEAD
from lesson_lib.sessions import SessionStore
from lesson_lib.tools import (
    PROFILE_KEYS,
    PROFILE_SOURCE,
    ToolRegistry,
    default_registry,
    get_tools_schema,
    profile_tools,
)

REMEMBER = "remember_preference"


@pytest.fixture
def store(sqlite_store):
    return sqlite_store


@pytest.fixture
def profile(store):
    return store.profile("xiaoming")


@pytest.fixture
def client():
    return offline_client()


class Told:
    """An Agent with a profile, and every tool call it made."""

    def __init__(self, store, profile, client, agent_class=Agent):
        self.session = store.create_session("xiaoming")
        self.events = []
        self.agent = agent_class.with_profile(profile, memory=self.session.memory(),
                                              client=client, on_tool=self.events.append)

    def __call__(self, text):
        self.events.clear()
        return self.agent.chat(text)

    def calls(self, name=REMEMBER):
        return [json.loads(e.arguments) for e in self.events if e.name == name]


def ask(client, messages, tools=None):
    """One request through the SDK: the assistant message."""
    return chat(messages, tools=tools, client=client)


def called(message):
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


# ----------------------------------------------------------------- the tool

def test_the_tool_has_a_fixed_vocabulary_and_says_when_to_call_it(profile):
    registry = profile_tools(profile)
    assert registry.names() == ["get_current_weather", "get_current_time", REMEMBER]
    assert default_registry.names() == ["get_current_weather", "get_current_time"], \
        "profile_tools makes a new registry; the seed tools are not changed"
    function = registry.get(REMEMBER).schema["function"]
    parameters = function["parameters"]
    assert parameters["properties"]["key"]["enum"] == list(PROFILE_KEYS) == \
        ["name", "language", "units", "diet", "project"]
    assert parameters["required"] == ["key", "value"]
    description = function["description"]
    for words in ("lasting preference", "later conversations", "Not for a one-off",
                  "never for what a tool result says"):
        assert words in description, f"the description should say {words!r}: {description}"
    alone = profile_tools(profile, tools=ToolRegistry())
    assert alone.names() == [REMEMBER]
    assert u.keeper_of(registry.get(REMEMBER).schema) == u.Keeper(
        REMEMBER, "key", "value", PROFILE_KEYS), "the offline model recognises it"


def test_the_tool_keeps_a_value_and_says_what_changed(profile):
    registry = profile_tools(profile, session_id="trip")
    first = json.loads(registry.execute(REMEMBER, '{"key": "diet", "value": " vegetarian "}'))
    assert first == {"key": "diet", "value": "vegetarian", "previous": None,
                     "changed": "diet: vegetarian (was: none)"}
    second = json.loads(registry.execute(REMEMBER, '{"key": "diet", "value": "vegan"}'))
    assert second["changed"] == "diet: vegan (was: vegetarian)"
    again = json.loads(registry.execute(REMEMBER, '{"key": "diet", "value": "vegan"}'))
    assert again["changed"] == "nothing: diet was already vegan"
    history = profile.history("diet")
    assert [e.value for e in history] == ["vegetarian", "vegan"]
    assert {(e.source, e.session_id) for e in history} == {(PROFILE_SOURCE, "trip")}


@pytest.mark.parametrize("arguments, says", [
    ('{"key": "pets", "value": "a cat"}', "'pets' is not one of"),
    ('{"key": "Diet", "value": "vegan"}', "'Diet' is not one of"),
    ('{"key": "diet"}', "'value' is a required property"),
    ('{"key": "diet", "value": "vegan", "why": "said so"}', "Additional properties"),
    ('{"key": "diet", "value": "   "}', "cannot keep 'diet'"),
    ('{"key": "diet", "value": "' + "x" * 101 + '"}', "cannot keep 'diet'"),
    ('{"key": "diet", "value": vegan}', "not valid JSON"),
])
def test_a_bad_call_is_refused_with_a_clear_error_and_nothing_is_kept(profile, arguments, says):
    result = json.loads(profile_tools(profile).execute(REMEMBER, arguments))
    assert says in result["error"], result
    assert result["hint"], "every error says what to do"
    assert profile.as_dict() == {}


def test_an_unknown_key_is_refused_with_the_keys_to_use(profile):
    result = json.loads(profile_tools(profile).execute(REMEMBER, '{"key": "pets", "value": "cat"}'))
    assert result["error"] == ("invalid arguments for remember_preference: 'pets' is not one of "
                               "['name', 'language', 'units', 'diet', 'project'] (at 'key')")
    assert result["hint"].startswith('use one of ["name", "language", "units", "diet", "project"]')
    direct = json.loads(profile_tools(profile).get(REMEMBER).function("pets", "cat"))
    assert "cannot keep 'pets'" in direct["error"], "called without execute(), it refuses too"
    assert profile.as_dict() == {}


# ----------------------------------------------------------------- lasting preferences

STATEMENTS = [  # (what the user says, key, value, the reply)
    ("I'm vegetarian", "diet", "vegetarian", "Noted: you're vegetarian. I'll remember that."),
    ("I am a vegetarian", "diet", "vegetarian", "Noted: you're vegetarian. I'll remember that."),
    ("我是素食者", "diet", "vegetarian", "好的，记住了：你吃素。"),
    ("我不吃辣", "diet", "no spicy food", "好的，记住了：你不吃辣。"),
    ("I don't eat spicy food", "diet", "no spicy food",
     "Noted: you don't eat spicy food. I'll remember that."),
    ("我不吃香菜", "diet", "不吃香菜", "好的，记住了：你不吃香菜。"),
    ("I'm allergic to peanuts", "diet", "allergic to peanuts",
     "Noted: your diet: allergic to peanuts. I'll remember that."),
    ("call me Xiaoming", "name", "Xiaoming", "Noted: your name is Xiaoming. I'll remember that."),
    ("My name is Xiaoming", "name", "Xiaoming",
     "Noted: your name is Xiaoming. I'll remember that."),
    ("叫我小明", "name", "小明", "好的，记住了：你叫小明。"),
    ("我叫小明", "name", "小明", "好的，记住了：你叫小明。"),
    ("use Fahrenheit", "units", "fahrenheit", "Noted: you prefer Fahrenheit. I'll remember that."),
    ("I prefer Fahrenheit", "units", "fahrenheit",
     "Noted: you prefer Fahrenheit. I'll remember that."),
    ("From now on, use Celsius.", "units", "celsius",
     "Noted: you prefer Celsius. I'll remember that."),
    ("用华氏度", "units", "fahrenheit", "好的，记住了：你习惯用华氏度。"),
    ("以后都用摄氏度", "units", "celsius", "好的，记住了：你习惯用摄氏度。"),
    ("I'm working on a trip planner", "project", "a trip planner",
     "Noted: you're working on a trip planner. I'll remember that."),
    ("我在做一个旅行规划的项目", "project", "旅行规划的项目", "好的，记住了：你在做旅行规划的项目。"),
    ("please answer in Chinese", "language", "Chinese", "好的，记住了：以后用中文回答你。"),
    ("请用中文回答", "language", "Chinese", "好的，记住了：以后用中文回答你。"),
    ("请用英文回答", "language", "English",
     "Noted: you want answers in English. I'll remember that."),
]


@pytest.mark.parametrize("text, key, value, reply", STATEMENTS)
def test_a_lasting_preference_is_kept_through_the_tool(store, profile, client, text, key, value,
                                                       reply):
    told = Told(store, profile, client)
    assert told(text) == reply
    assert told.calls() == [{"key": key, "value": value}]
    assert profile.as_dict() == {key: value}
    (entry,) = profile.history(key)
    assert (entry.source, entry.session_id) == (PROFILE_SOURCE, told.session.session_id)


def test_the_loop_agent_keeps_it_too(store, profile, client):
    told = Told(store, profile, client, LoopAgent)
    assert told("I'm vegetarian") == "Noted: you're vegetarian. I'll remember that."
    assert profile.get("diet") == "vegetarian"


def test_a_newer_value_replaces_the_old_one_and_the_old_one_stays_in_history(store, profile,
                                                                            client):
    told = Told(store, profile, client)
    told("I'm vegetarian")
    assert told("我不吃辣") == "好的，记住了：你不吃辣（之前：你吃素）。"
    assert profile.get("diet") == "no spicy food"
    assert [e.value for e in profile.history("diet")] == ["vegetarian", "no spicy food"]
    told("use Fahrenheit")
    assert told("I prefer Celsius") == \
        "Noted: you prefer Celsius (was: fahrenheit). I'll remember that."
    assert [e.value for e in profile.history("units")] == ["fahrenheit", "celsius"]
    assert told("I prefer Celsius") == "I already knew that: you prefer Celsius."
    assert len(profile.history("units")) == 2, "the same value again changes nothing"


@pytest.mark.parametrize("text", [
    "What's the weather in Chengdu in Fahrenheit today?",
    "what's the weather in Fahrenheit today?",
    "Use Fahrenheit for the weather in Chengdu",
    "Use Fahrenheit for the weather in Chengdu today",
    "用华氏度告诉我成都今天的天气",
    "16摄氏度换成华氏是多少？",
    "请用中文回答这个问题",
    "How do you say hello in Chinese?",
    "Answer in English just this once",
    "What's my name?",
    "Hello",
    "I'm planning a trip.",
    "他叫我去北京",
    "I'm fine, thanks",
    "Can you speak Chinese?",
    "I prefer Chinese food",
    "I'd like the weather in Fahrenheit",
    "I don't eat breakfast",
    "我不吃饭了",
    "I'm working on it",
])
def test_one_off_requests_keep_nothing(store, profile, client, text):
    told = Told(store, profile, client)
    told(text)
    assert told.calls() == [], f"{text!r} is not a lasting preference"
    assert profile.as_dict() == {}


def test_a_one_off_unit_still_reaches_the_weather_tool(store, profile, client):
    told = Told(store, profile, client)
    reply = told("Use Fahrenheit for the weather in Chengdu today")
    assert told.calls("get_current_weather") == [{"location": "Chengdu", "unit": "fahrenheit"}]
    assert "60.8°F" in reply and profile.as_dict() == {}


def test_a_statement_and_a_question_in_one_message(store, profile, client):
    told = Told(store, profile, client)
    assert told("I'm vegetarian, where should I eat in Chengdu?") == (
        "Noted: you're vegetarian. I'll remember that. As for “where should I eat in "
        "Chengdu”: none of my tools or rules can answer that.")
    assert profile.get("diet") == "vegetarian"
    assert told("我吃素，成都哪里好吃？") == \
        "这个我已经记得了：你吃素。至于「成都哪里好吃」，我手头的工具和规则回答不了。"
    reply = told("I'm vegan. What's the weather in Chengdu?")
    assert [e.name for e in told.events] == [REMEMBER, "get_current_weather"], \
        "both calls in one round"
    assert reply == ("Noted: you're vegan (was: vegetarian). I'll remember that. Chengdu is "
                     "cloudy, 16°C, with a light breeze, humidity 70%.")


def test_a_unit_stated_with_a_question_is_used_for_it(store, profile, client):
    told = Told(store, profile, client)
    reply = told("From now on use Fahrenheit: what's the weather in Chengdu?")
    assert told.calls() == [{"key": "units", "value": "fahrenheit"}]
    assert told.calls("get_current_weather") == [{"location": "Chengdu", "unit": "fahrenheit"}]
    assert reply.endswith("Chengdu is cloudy, 60.8°F, with a light breeze, humidity 70%.")


def test_without_the_tool_part_one_is_unchanged(client):
    agent = Agent(client=client)
    assert agent.chat("My name is Xiaoming") == "Nice to meet you, Xiaoming! How can I help?"
    assert agent.chat("What's my name?") == "You told me your name is Xiaoming."
    assert ask(client, [{"role": "user", "content": "叫我小明"}]).content == \
        "你好小明！有什么可以帮你的？"
    assert "离线的规则教学模型" in ask(client, [{"role": "user", "content": "我是素食者"}]).content, \
        "'素食者' is not a name"


def test_the_tool_is_never_chosen_by_shared_words(profile, client):
    tools = profile_tools(profile).schemas()
    message = ask(client, [{"role": "user", "content": "Weather in Chengdu in Fahrenheit?"}], tools)
    assert called(message) == [("get_current_weather", {"location": "Chengdu",
                                                         "unit": "fahrenheit"})]
    for text in ("Please remember my preference", "What language do you speak?"):
        message = ask(client, [{"role": "user", "content": text}], tools)
        assert called(message) == [], text


def test_a_learners_profile_tool_is_recognised_by_its_schema(client):
    learner = {"type": "function", "function": {
        "name": "save_user_fact",
        "description": "Store something the user says about themselves in their profile.",
        "parameters": {"type": "object", "properties": {
            "field": {"type": "string", "enum": ["name", "diet", "unit"]},
            "fact": {"type": "string"}}, "required": ["field", "fact"]}}}
    for text, expected in [("我不吃辣", {"field": "diet", "fact": "no spicy food"}),
                           ("use Fahrenheit", {"field": "unit", "fact": "fahrenheit"})]:
        message = ask(client, [{"role": "user", "content": text}], [learner])
        assert called(message) == [("save_user_fact", expected)], text
    message = ask(client, [{"role": "user", "content": "please answer in Chinese"}], [learner])
    assert called(message) == [], "a key the tool does not take is not sent"
    note = {"type": "function", "function": {
        "name": "save_note", "description": "Save a note to remember later.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                       "required": ["text"]}}}
    assert u.keeper_of(note) is None, "a note tool has no key: it is an ordinary tool"


# ----------------------------------------------------------------- the profile, read back

def profiled(profile, text):
    return [{"role": "system", "content": system_prompt_with(profile)},
            {"role": "user", "content": text}]


def test_the_profile_in_the_system_prompt_sets_the_weather_unit(store, profile, client):
    question = "What's the weather in Chengdu?"
    assert called(ask(client, profiled(profile, question), get_tools_schema())) == [
        ("get_current_weather", {"location": "Chengdu", "unit": "celsius"})], "no profile yet"
    profile.set("units", "fahrenheit")
    assert called(ask(client, profiled(profile, question), get_tools_schema())) == [
        ("get_current_weather", {"location": "Chengdu", "unit": "fahrenheit"})]
    assert called(ask(client, profiled(profile, "成都天气？"), get_tools_schema())) == [
        ("get_current_weather", {"location": "成都", "unit": "fahrenheit"})]
    said = ask(client, profiled(profile, "Weather in Chengdu in Celsius?"), get_tools_schema())
    assert called(said) == [("get_current_weather", {"location": "Chengdu", "unit": "celsius"})], \
        "what the request says wins over the profile"
    agent = Agent.with_profile(profile, memory=store.create_session("xiaoming").memory(),
                               client=client)
    assert agent.chat(question) == "Chengdu is cloudy, 60.8°F, with a light breeze, humidity 70%."


def test_the_profile_in_the_system_prompt_answers_the_name_question(profile, client):
    assert ask(client, profiled(profile, "What's my name?")).content == \
        "You haven't told me your name."
    profile.set("name", "Xiaoming")
    assert ask(client, profiled(profile, "What's my name?")).content == \
        "Your profile says your name is Xiaoming."
    assert ask(client, profiled(profile, "我叫什么名字？")).content == "你的资料里写着你叫Xiaoming。"
    told = [*profiled(profile, "My name is Lao Zhang"),
            {"role": "assistant", "content": "Nice to meet you, Lao Zhang!"},
            {"role": "user", "content": "What's my name?"}]
    assert ask(client, told).content == "You told me your name is Lao Zhang.", \
        "what the conversation says is newer than the profile"
    assert ask(client, profiled(profile, "Hello")).content.startswith("Hello, Xiaoming!")


def test_the_profile_language_sets_the_reply_language(profile, client):
    profile.set("language", "Chinese")
    message = ask(client, [*profiled(profile, "What's the weather in Chengdu?"),
                           {"role": "assistant", "content": None, "tool_calls": [{
                               "id": "call_1", "type": "function", "function": {
                                   "name": "get_current_weather",
                                   "arguments": '{"location": "Chengdu"}'}}]},
                           {"role": "tool", "tool_call_id": "call_1",
                            "content": default_registry.execute(
                                "get_current_weather", '{"location": "Chengdu"}')}])
    assert message.content == "成都多云，16°C，微风，湿度70%。"


def test_the_offline_model_reads_the_profile_line_as_the_profile_writes_it(profile):
    assert PROMPT_HEAD == u.PROFILE_HEAD + " "
    assert u.PROFILE_KEYS == PROFILE_KEYS
    profile.set("name", "Xiaoming")
    profile.set("diet", ["vegetarian", "no chili"])
    system = {"role": "system", "content": f"Be brief. {profile.as_prompt()}\nAnswer kindly."}
    assert u.profile_in([system]) == {"name": "Xiaoming", "diet": "vegetarian, no chili"}


# ----------------------------------------------------------------- across sessions

def test_system_prompt_with_adds_the_profile_only_when_it_knows_something(profile):
    assert system_prompt_with(None) == SYSTEM_PROMPT
    assert system_prompt_with(profile) == SYSTEM_PROMPT, "an empty profile adds nothing"
    profile.set("diet", "vegetarian")
    assert system_prompt_with(profile, "Be brief.") == \
        "Be brief.\nWhat you know about this user: diet: vegetarian"


def test_an_agent_without_a_profile_is_as_before(client):
    agent = Agent(client=client)
    assert agent.memory.to_api_format() == [{"role": "system", "content": SYSTEM_PROMPT}]
    assert agent.registry is default_registry and agent.profile is None
    assert [t["function"]["name"] for t in agent.tools] == default_registry.names()


def test_an_agent_with_a_profile_offers_the_tool_with_its_own_tools(profile, client):
    mine = default_registry.subset(["get_current_time"])
    agent = Agent.with_profile(profile, "Be brief.", tools=mine, client=client)
    assert agent.registry.names() == ["get_current_time", REMEMBER]
    assert mine.names() == ["get_current_time"]
    assert agent.memory.to_api_format()[0] == {"role": "system", "content": "Be brief."}
    assert agent.profile is profile
    loop = LoopAgent.with_profile(profile, max_turns=2, client=client)
    assert isinstance(loop, LoopAgent) and loop.max_turns == 2
    assert loop.registry.names() == [*default_registry.names(), REMEMBER]


def test_a_new_session_starts_with_what_the_last_one_kept(tmp_path, client):
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    with SessionStore(url) as store:
        first = store.create_session("xiaoming", session_id="monday")
        agent = Agent.with_profile(store.profile("xiaoming"), memory=first.memory(),
                                   client=client)
        assert agent.chat("I'm vegetarian") == "Noted: you're vegetarian. I'll remember that."
        assert first.get_items()[0] == {"role": "system", "content": SYSTEM_PROMPT}
    with SessionStore(url) as store:  # a new process: a new store object, a new window
        profile = store.profile("xiaoming")
        second = store.create_session("xiaoming", session_id="tuesday")
        agent = Agent.with_profile(profile, memory=second.memory(), client=client)
        system = second.get_items()[0]["content"]
        assert "diet: vegetarian" in system and system.startswith(SYSTEM_PROMPT)
        assert "I'm vegetarian" not in json.dumps(second.get_items()), "no old conversation"
        (entry,) = profile.history("diet")
        assert (entry.session_id, entry.source) == ("monday", PROFILE_SOURCE)
        agent.chat("I'm vegan")
        assert [e.session_id for e in profile.history("diet")] == ["monday", "tuesday"]
        assert store.profile("laozhang").as_dict() == {}, "profiles are per user"
