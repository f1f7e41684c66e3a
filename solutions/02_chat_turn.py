# Notebook 02, exercise 1: one turn of a chat that remembers (add, send the whole memory, add).
# Checked by: lesson_lib.exercises.nb02.check_chat_turn(chat_turn)
from lesson_lib.llm import chat


def chat_turn(memory, text):
    """One turn of a chat that remembers; returns the reply's text."""
    memory.add({"role": "user", "content": text})                # 1. write what the user said
    reply = chat(memory.to_api_format())                         # 2. send the WHOLE memory
    memory.add({"role": "assistant", "content": reply.content})  # 3. write what the model said
    return reply.content
