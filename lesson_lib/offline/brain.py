"""PLACEHOLDER, being replaced: the offline model's reply logic."""

from __future__ import annotations


def reply(body: dict) -> dict:
    return {"message": {"role": "assistant", "content": "placeholder"}, "finish_reason": "stop"}
