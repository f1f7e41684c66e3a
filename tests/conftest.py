"""Shared test set-up: no test may open a connection outside 127.0.0.1."""

import ipaddress
import socket

import pytest

_real_connect = socket.socket.connect


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        ok = host == "localhost"
        try:
            ok = ok or ipaddress.ip_address(host).is_loopback
        except ValueError:
            pass
        if not ok:
            raise AssertionError(f"test tried to connect to {address!r}: only 127.0.0.1 is allowed")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.delenv("LESSON_BACKEND", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield
