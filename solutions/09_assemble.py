# Notebook 09, exercise 2: join the chunks of a streamed reply into the assistant message.
# Checked by: lesson_lib.exercises.nb09.check_assemble(assemble)


def assemble(chunks):
    """The assistant message of choice 0, joined from a stream's chunks."""
    texts = []
    calls = {}  # index -> the call being built
    for chunk in chunks:
        for part in chunk.choices:  # the usage chunk has none; with n=2, two choices share
            if part.index != 0:
                continue
            delta = part.delta
            if delta.content:
                texts.append(delta.content)
            for piece in delta.tool_calls or []:
                if piece.index not in calls:  # the first piece of a call: id, type, name
                    calls[piece.index] = {"id": piece.id, "type": piece.type or "function",
                                          "function": {"name": piece.function.name,
                                                       "arguments": ""}}
                calls[piece.index]["function"]["arguments"] += piece.function.arguments or ""
    message = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message
