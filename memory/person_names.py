"""The names of people a text mentions, for the leak check (``leaks.py``): who was talked about.

Three sources, each tuned to catch names rather than miss them (a false name costs at most an
unchanged self-image): ``@``-mentions; English words written capitalised in the middle of a
sentence, except a few capitalised common words (days, months, titles, ...); and Chinese person
names as jieba's part-of-speech tagger finds them (``chinese_names.py``), run in a child process
(``chinese_names_apart``) so that the tagger's tables do not stay in the bot's memory.

An English name that is an ordinary word too (written in lower case elsewhere: "Will", the "One" of
a title) counts only where it is capitalised in the middle of a sentence, so a shared text may
still begin a sentence with "One" or say "I will".
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Sequence

from . import chinese_names as _zh
from .text import STOP_EN

log = logging.getLogger("engram.leaks")

TAGGER_SECONDS = 300  # the child process's time for a day's private lines (about a millisecond a line)

MENTION = re.compile(r"@([^\s@,，.。:：;；!！?？()（）\[\]【】]+)")
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+")
_CAPITALISED = re.compile(r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?:[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)*")
_SENTENCE_END = set(".!?。！？…:：;；\n")
_OPENING = "\"'“‘«([{（【「『-–—*_ \t\r"
_ANY_CJK = re.compile("[\u4e00-\u9fff]")

# Capitalised mid-sentence yet no one's name: weekdays, months, titles, family words, greetings
# (and the function words of text.STOP_EN, as in a book's title; but "Will" is a name as often as not).
COMMON_CAPITALISED = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri
    sat sun january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec christmas easter halloween thanksgiving
    mr mrs ms miss dr prof sir madam mom mum dad mama papa grandma grandpa granny auntie uncle
    ok okay oh hi hey hello thanks thank yes no lol omg god lord internet french italian american korean
    german indian russian canadian australian mexican european african asian western eastern thai greek
    dutch arabic latin""".split())
_LANGUAGE = re.compile(r"(?:ese|ish)$")  # Chinese, Japanese, English, Spanish: a language, not a person

def mentions(text: str) -> set[str]:
    """The ``@``-mentioned names in ``text``."""
    return {m for m in MENTION.findall(text) if m.lower() not in ("all", "everyone", "here", "全体成员")}


def english_names(text: str) -> set[str]:
    """Words written capitalised in the middle of a sentence, as written (``Mei``, ``McDonald``)."""
    out = set()
    for m in _CAPITALISED.finditer(text):
        word = m.group()
        if _starts_sentence(text, m.start()) or _attached(text, m.start(), m.end()):
            continue
        low = word.lower()
        if (low not in COMMON_CAPITALISED and low.removesuffix("s") not in COMMON_CAPITALISED
                and not _LANGUAGE.search(low) and (low not in STOP_EN or low == "will")):
            out.add(word)
    return out


def lowercase_words(text: str) -> set[str]:
    """The words ``text`` writes in lower case (a capitalised one among them is an ordinary word too)."""
    return {w for w in _WORD.findall(text) if w[0].islower()}


def chinese_names_apart(texts: Sequence[str]) -> list[set[str]]:
    """Each text's Chinese person names (``chinese_names.chinese_names``), found in a child process
    that ends with the check; where no child can run (no interpreter to start, a crash, a timeout)
    they are found here instead, and the log says why once a run."""
    texts = list(texts)
    if not any(_ANY_CJK.search(t) for t in texts):
        return [set() for _ in texts]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "PYTHONIOENCODING": "utf-8"}
    try:
        done = subprocess.run([sys.executable, _zh.__file__], input=json.dumps(texts, ensure_ascii=False),
                              capture_output=True, text=True, encoding="utf-8", env=env,
                              timeout=TAGGER_SECONDS, check=True)
        found = json.loads(done.stdout)
        if not (isinstance(found, list) and len(found) == len(texts)):
            raise ValueError(f"{len(texts)} texts, an answer of another shape")
        return [set(names) for names in found]
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        said = e.stderr if isinstance(e, subprocess.CalledProcessError) else ""
        why = said.strip().splitlines()[-1:] if said else e
        log.warning("Chinese names: no child process (%s); looked for in this process", why)
        return [set(names) for names in _zh.names_of_texts(texts)]


def written_in(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as written (a Latin name as a whole word, case kept)."""
    if _ANY_CJK.search(name):
        return name in text
    return re.search(rf"(?<![A-Za-zÀ-ÖØ-öø-ÿ]){re.escape(name)}(?![a-zß-öø-ÿ])", text) is not None


def _starts_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(_OPENING)
    return not before or before[-1] in _SENTENCE_END


def _attached(text: str, start: int, end: int) -> bool:
    """Part of a longer token (``iPhone``, ``x.Com``, ``#Tag``): not a word of its own."""
    return (start > 0 and (text[start - 1].isalnum() and not _ANY_CJK.match(text[start - 1])
                           or text[start - 1] in "#@/.\\_")) or (end < len(text) and text[end].isdigit())
