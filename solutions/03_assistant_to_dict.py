# Notebook 03, Build it: the SDK's assistant message as the plain dict that memory keeps.
# Checked by: lesson_lib.exercises.nb03.check_assistant_to_dict(my_assistant_to_dict)


def my_assistant_to_dict(message) -> dict:
    """The SDK's assistant message as a plain dict to store and send back: role, content,
    and tool_calls (one {"id", "type", "function": {"name", "arguments"}} per call) only
    when the model called tools."""
    content = message.content  # None beside calls is fine
    if content is None and not message.tool_calls:  # a refusal: no text, no calls
        content = message.refusal or ""  # without calls the API takes only a string
    stored = {"role": "assistant", "content": content}
    if message.tool_calls:  # None (or absent) when the model only wrote text
        stored["tool_calls"] = [
            {"id": call.id,  # each tool reply names this id
             "type": "function",
             "function": {"name": call.function.name,
                          "arguments": call.function.arguments}}  # the string, as written
            for call in message.tool_calls]
    return stored
