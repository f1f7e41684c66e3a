# Notebook 00, exercise 2: a question asked in Chinese, and the whole message chat() returns.
# Checked by: lesson_lib.exercises.nb00.check_chinese_reply(my_reply)
from lesson_lib.llm import chat

# The model answers in the language of the latest message, so the question is in Chinese:
# "Hello! What can you do?". The check wants the message itself (my_reply), not my_reply.content.
my_reply = chat([{"role": "user", "content": "你好！你能做什么？"}])
