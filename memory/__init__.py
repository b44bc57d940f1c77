"""The framework-agnostic memory core. It never imports astrbot."""

from .browse import Browser, MemoryFilter, Page
from .embedders import Embedder, LocalE5, NoEmbedder, OpenAIEmbedder, make_embedder
from .engine import Engram
from .errors import (
    EmbeddingError,
    EngramError,
    InvalidInputError,
    InvalidScopeError,
    StoreError,
    UnknownIdError,
)
from .model import EPISODE_KINDS, MEMORY_KINDS, MEMORY_STATUSES, SELF, Audience, Episode, Hit, Memory
from .ranker import FeatureRanker, LinearRanker, Ranker
from .recall import RecallSettings
from .render import Block, memory_block
from .scopes import narrow_scope, parse_scope, space_scope, visibility

__all__ = [
    "EPISODE_KINDS", "MEMORY_KINDS", "MEMORY_STATUSES", "Block", "Browser", "MemoryFilter", "Page",
    "memory_block", "SELF", "Audience", "Embedder", "EmbeddingError", "Engram", "EngramError", "Episode",
    "FeatureRanker", "Hit", "InvalidInputError", "InvalidScopeError", "LinearRanker", "LocalE5",
    "Memory", "NoEmbedder", "OpenAIEmbedder", "RecallSettings", "Ranker", "StoreError",
    "UnknownIdError", "make_embedder", "narrow_scope", "parse_scope", "space_scope", "visibility",
]
