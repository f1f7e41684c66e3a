# Notebook 06, build it: the agent loop, `while tool_calls`, capped at max_turns model calls.
# Checked by: lesson_lib.exercises.nb06.check_my_loop(my_loop)

from lesson_lib.llm import chat
from lesson_lib.protocol import assistant_to_dict


def my_loop(messages, registry, max_turns=5):
    """Run the agent loop on `messages` (appending to it); return (reply, turns)."""
    tools = registry.schemas()
    for turn in range(1, max_turns + 1):  # turn counts the model calls
        message = chat(messages, tools=tools)  # the tools on every call, not only the first
        messages.append(assistant_to_dict(message))
        if not message.tool_calls:  # words, not calls: this is the answer
            return message.content, turn
        for call in message.tool_calls:  # every call, parallel ones too, each by its id
            result = registry.execute(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    # the cap: every call made so far has its results, so the history is still valid
    return f"I stopped after {max_turns} model calls without an answer.", max_turns
