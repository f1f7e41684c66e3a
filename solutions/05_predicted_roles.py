# Notebook 05, exercise 1: predict the roles in a fresh agent's memory after one weather question.
# Checked by: lesson_lib.exercises.nb05.check_predicted_roles(predicted_roles)

# "What's the weather in Shanghai and Beijing?": two cities are two parallel calls in ONE
# assistant message, and each call gets its own tool message before the final answer.
predicted_roles = [
    "system",     # Agent() writes its system prompt first
    "user",       # step 0: the input, once
    "assistant",  # the first call's reply: tool_calls for Shanghai and Beijing
    "tool",       # Shanghai's weather
    "tool",       # Beijing's weather
    "assistant",  # the second call (tools=None): the answer
]
