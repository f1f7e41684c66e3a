"""A conversation pasted as text, read back as messages: "User: …" / "Assistant: …" lines.

A summariser is often sent a conversation as one text (LangChain's buffer string is
"Human: …\nAI: …"; a person pastes a chat log under "Summarize the following
conversation."). `messages_in(text)` reads such a transcript back into Chat messages,
so the offline model summarises it as it summarises the messages it was sent (brain.py,
rule 2). A labelled line starts a message; the lines after it without a label continue
it. The labels known are the roles' usual names, in English and Chinese (SPEAKERS);
a text with fewer than two labelled lines, or none of them the user's, is no transcript.
"""

from __future__ import annotations

import re

SPEAKERS = {
    "user": "user", "human": "user", "customer": "user", "client": "user", "me": "user",
    "q": "user", "question": "user",
    "assistant": "assistant", "ai": "assistant", "bot": "assistant", "chatbot": "assistant",
    "agent": "assistant", "support": "assistant", "model": "assistant", "a": "assistant",
    "answer": "assistant", "gpt": "assistant", "chatgpt": "assistant",
    "system": "system",
    "用户": "user", "客户": "user", "顾客": "user", "我": "user", "问": "user", "提问": "user",
    "助手": "assistant", "助理": "assistant", "客服": "assistant", "机器人": "assistant",
    "答": "assistant", "回答": "assistant", "系统": "system",
}
# "User: …", "**AI:** …", "[Human]: …", "用户：…"
_LINE = re.compile(r"^\s*[*_\[]*\s*([A-Za-z]+|[\u4e00-\u9fff]{1,3})\s*[*_\]]*\s*[:：]\s*[*_]*\s*(.*)$")
_ASKS = re.compile(r"(?i)\b(summari[sz]e|summari[sz]ing|summary|recap|sum up|tl;?dr)\b|"
                   r"总结|概括|归纳|摘要|概述")


def asks_to_summarise(text: str) -> bool:
    """"Summarize the following conversation.", "You summarise chat logs.", "请总结下面的对话"."""
    return bool(_ASKS.search(text or ""))


def messages_in(text: str) -> list[dict]:
    """The transcript in `text` as messages ({"role", "content"}), in order; [] when
    `text` holds no transcript (see the module's doc)."""
    messages: list[dict] = []
    for line in (text or "").splitlines():
        found = _LINE.match(line)
        role = SPEAKERS.get(found.group(1).lower()) if found else None
        if role is not None:
            messages.append({"role": role, "content": found.group(2).strip()})
        elif messages and line.strip():
            messages[-1]["content"] = f"{messages[-1]['content']}\n{line.strip()}".strip()
    if len(messages) < 2 or not any(m["role"] == "user" for m in messages):
        return []
    return [m for m in messages if m["content"]]
