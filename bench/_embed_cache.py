"""An Embedder that keeps vectors on disk, keyed by model name + kind + text hash."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from astrbot_plugin_engram.memory import Embedder


class CachingEmbedder:
    """Wraps an embedder; vectors already computed are read from ``folder`` instead."""

    def __init__(self, inner: Embedder, folder: Path):
        self.inner = inner
        self.name = inner.name
        if getattr(inner, "asymmetric", False):  # items get their second vector too (as_query_model)
            self.asymmetric = True
        safe = hashlib.sha1(inner.name.encode()).hexdigest()[:12]
        self.path = Path(folder) / f"vectors-{safe}.npz"
        self._vecs: dict[str, np.ndarray] = {}
        self._dirty = False
        if self.path.exists():
            with np.load(self.path) as z:
                self._vecs = dict(zip(z["keys"].tolist(), z["vecs"]))

    def _key(self, text: str, kind: str) -> str:
        return hashlib.sha1(f"{self.name}\0{kind}\0{text}".encode()).hexdigest()

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        keys = [self._key(t, kind) for t in texts]
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in self._vecs}.items())
        if todo:
            vecs = await self.inner.embed([t for _, t in todo], kind)  # type: ignore[arg-type]
            self._vecs.update((k, v) for (k, _), v in zip(todo, vecs))
            self._dirty = True
        return np.stack([self._vecs[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def save(self) -> None:
        """Write new vectors to disk."""
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._vecs)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vecs=np.stack([self._vecs[k] for k in keys]))
        tmp.replace(self.path)
        self._dirty = False
