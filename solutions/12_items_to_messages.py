# Notebook 12, exercise 1: the items a server holds, back into the messages list you keep.
# Checked by: lesson_lib.exercises.nb12.check_items_to_messages(items_to_messages)


def items_to_messages(items, instructions=None):
    """Responses items (dicts, oldest first) as a Chat Completions messages list."""
    messages = [{"role": "system", "content": instructions}] if instructions else []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            text = "".join(part.get("text", "") for part in item["content"])
            messages.append({"role": item["role"], "content": text})
        elif kind == "function_call":
            entry = {"id": item["call_id"], "type": "function",
                     "function": {"name": item["name"], "arguments": item["arguments"]}}
            last = messages[-1] if messages else None
            if last and last["role"] == "assistant" and last.get("tool_calls"):
                last["tool_calls"].append(entry)  # calls made at once share one message
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [entry]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"],
                             "content": item["output"]})
    return messages
