"""The time limit a check puts on the learner's code (lesson_lib.exercises.deadline): a loop
that never ends is stopped, in the main thread by a timer signal and in any other thread by
a tracer; limits nest, each stop says which limit it was, and a timer that was there before
comes back."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from lesson_lib.exercises import Stuck, finishing
from lesson_lib.exercises.deadline import TookTooLong, time_limit


def spin():
    while True:
        pass


def test_a_loop_that_never_ends_is_stopped_in_the_main_thread():
    started = time.monotonic()
    with pytest.raises(TookTooLong) as stopped, time_limit(0.3) as limit:
        spin()
    assert stopped.value.limit is limit and time.monotonic() - started < 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_limits_nest_and_each_stop_names_its_own():
    with pytest.raises(TookTooLong) as outer_stop, time_limit(1.0) as outer:
        with pytest.raises(TookTooLong) as inner_stop, time_limit(0.2) as inner:
            spin()
        assert inner_stop.value.limit is inner
        spin()
    assert outer_stop.value.limit is outer


def test_an_except_exception_in_the_learners_code_does_not_swallow_it():
    def careful():
        while True:
            try:
                spin()
            except Exception:  # noqa: BLE001  (what a learner writes)
                pass

    with pytest.raises(TookTooLong), time_limit(0.2):
        careful()


def test_another_thread_is_stopped_by_a_tracer():
    found = []

    def run():
        try:
            with time_limit(0.3):
                spin()
        except TookTooLong:
            found.append("stopped")

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(10)
    assert found == ["stopped"] and not worker.is_alive()


def test_a_timer_that_was_there_before_comes_back():
    rang = []
    previous = signal.signal(signal.SIGALRM, lambda *_: rang.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.6)
        with time_limit(5):
            pass
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < left <= 0.6
        time.sleep(0.8)
        assert rang == [1]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_finishing_says_on_what_and_where():
    with pytest.raises(Stuck) as stuck, finishing(lambda: "this history: [user]",
                                                 seconds=0.7):
        spin()
    assert stuck.value.what.startswith("your code did not finish in 0.7 s on this history: "
                                       "[user]; it was running ")
    assert stuck.value.what.endswith("→ spin() when the check stopped it"), stuck.value.what
