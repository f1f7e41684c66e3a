# Notebook 07b, Build it: a trim that keeps a token budget without breaking the history.
# Checked by: lesson_lib.exercises.nb07.check_my_budget_trim(my_budget_trim)
from lesson_lib.budget import truncate_text
from lesson_lib.repair import repair_messages
from lesson_lib.tokens import count_messages, count_text


def my_budget_trim(messages, budget):
    history = repair_messages(messages).messages  # a valid copy: the caller's list stays as it was
    users = [i for i, m in enumerate(history) if m["role"] == "user"]
    start = users[-1] if users else 0  # the current turn: the latest question on (all, if none)
    older, turn = history[:start], history[start:]

    # the older messages in units: one message, or a tool call with all its results
    units = []
    for message in older:
        if message["role"] == "tool":
            units[-1].append(message)
        else:
            units.append([message])

    def cost():
        return count_messages([m for unit in units for m in unit] + turn)

    # drop whole units, oldest first, never a system message, until the list fits
    k = 0
    while cost() > budget and k < len(units):
        if units[k][0]["role"] == "system":
            k += 1
        else:
            del units[k]

    # still over: the current turn is too big on its own; cut its largest tool results
    tools = sorted((n for n, m in enumerate(turn) if m["role"] == "tool"),
                   key=lambda n: count_text(turn[n]["content"]), reverse=True)
    for n in tools:
        over = cost() - budget
        if over <= 0:
            break
        text = turn[n]["content"]
        turn[n] = {**turn[n], "content": truncate_text(text, max(count_text(text) - over, 0))}

    if cost() > budget:  # only the system messages and the current turn are left
        raise ValueError(f"over budget by {cost() - budget} tokens, even with the current "
                         "turn's tool results cut")
    return [m for unit in units for m in unit] + turn
