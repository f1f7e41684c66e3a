# Notebook 08, exercise 1: one question that fills each default memory, so the name is forgotten.
# Checked by: lesson_lib.exercises.nb08.check_forget(my_messages)

# One question, five tool calls: the assistant message, five tool results and the answer are
# 7 messages (max_messages counts them) and some 600 tokens with the tool definitions
# (token_budget counts those), so the oldest turn, the one with the name, has to go.
FIVE_CITIES = "What's the weather in Beijing, Shanghai, Chengdu, Tokyo and London?"

my_messages = {
    "ShortTermMemory": [FIVE_CITIES],
    "TokenBudgetMemory": [FIVE_CITIES],
}
