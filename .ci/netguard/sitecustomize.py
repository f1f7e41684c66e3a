"""Loaded by every Python process CI starts (PYTHONPATH=.ci/netguard), kernels included:
any network connection to an address outside 127.0.0.0/8 or ::1 fails, and is written
to $LESSON_NETGUARD_LOG so CI fails even if the error was swallowed."""

import ipaddress
import os
import socket

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check(sock, address):
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0]
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        if host == "localhost":
            return
    log = os.environ.get("LESSON_NETGUARD_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"pid {os.getpid()}: blocked connection to {address!r}\n")
    raise ConnectionRefusedError(f"network guard: connection to {address!r} is not allowed in CI")


def _connect(self, address):
    _check(self, address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    _check(self, address)
    return _real_connect_ex(self, address)


socket.socket.connect = _connect
socket.socket.connect_ex = _connect_ex
