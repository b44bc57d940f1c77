"""The framework-agnostic memory core. It never imports astrbot."""

from .chat import ChatModel, ChatResult, OpenAIChat
from .embedders import Embedder, LocalE5, NoEmbedder, OpenAIEmbedder, make_embedder
from .engram import Engram
from .errors import (
    ChatError,
    EmbeddingError,
    EngramError,
    ErasedMeanwhile,
    InvalidInputError,
    InvalidScopeError,
    StoreDamaged,
    StoreError,
    StoreUnwritable,
    UnknownIdError,
)
from .metabolism.forgetting import Forgetting
from .metabolism.merging import MergeSettings
from .model import EPISODE_KINDS, MEMORY_KINDS, MEMORY_STATUSES, SELF, Audience, Episode, Hit, Memory
from .recall import RecallSettings
from .recall.ranker import FeatureRanker, LinearRanker, Ranker
from .render import Block
from .scopes import narrow_scope, parse_scope, place_scope, visibility
from .store import BrowseReads, Store
from .store.opening import open_store
from .strength import MetabolismSettings

__all__ = [
    "EPISODE_KINDS", "MEMORY_KINDS", "MEMORY_STATUSES", "Block",
    "SELF", "Audience", "BrowseReads", "ChatError", "ChatModel", "ChatResult", "Embedder", "EmbeddingError",
    "Engram",
    "EngramError", "ErasedMeanwhile", "Episode", "Forgetting", "MergeSettings", "MetabolismSettings",
    "FeatureRanker", "Hit", "InvalidInputError", "InvalidScopeError", "LinearRanker", "LocalE5",
    "Memory", "NoEmbedder", "OpenAIChat", "OpenAIEmbedder", "RecallSettings", "Ranker", "StoreError",
    "StoreDamaged", "StoreUnwritable", "Store", "UnknownIdError", "make_embedder", "narrow_scope",
    "open_store", "parse_scope", "place_scope", "visibility",
]
