# Notebook 09, exercise 3: retry what may pass, with exponential back-off and jitter.
# Checked by: lesson_lib.exercises.nb09.check_retries(call_with_retries)
import random
import time

import openai

MAY_PASS = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)


def call_with_retries(fn, attempts=4, base=0.5, sleep=time.sleep):
    for k in range(attempts):
        try:
            return fn()
        except MAY_PASS:
            if k == attempts - 1:  # no attempt left: the caller must see the failure
                raise
            sleep(base * 2 ** k * (1 + random.random() / 10))
