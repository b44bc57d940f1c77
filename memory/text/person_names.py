"""The names of people a text mentions, for the leak check (``leaks.py``): who was talked about.

Three sources, each tuned to catch names rather than miss them (a false name costs at most an
unchanged self-image): ``@``-mentions; English words written capitalised in the middle of a
sentence, except a few capitalised common words (days, months, titles, ...), and at the start of
one when what follows is what follows a person ("Mei is ill", "Jake said", "Tom's dad"); and Chinese
person names as jieba's part-of-speech tagger finds them (``chinese_names.py``), run in a child
process (``chinese_names_apart``) so that the tagger's tables do not stay in the bot's memory.
``guess_names`` is the three together. (The leak check also looks for the names the store knows.)

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
from .words import STOP_EN, STOP_ZH

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
    aunt ok okay oh hi hey hello thanks thank yes no lol omg god lord internet french italian american korean
    german indian russian canadian australian mexican european african asian western eastern thai greek
    dutch arabic latin""".split())
_LANGUAGE = re.compile(r"(?:ese|ish)$")  # Chinese, Japanese, English, Spanish: a language, not a person

# Words that begin a sentence followed by "is", "was" or "has" and are no one's name: a capitalised
# word at a sentence start counts as a name only when it is none of these (nor a function word of
# text.STOP_EN) and what follows it is what follows a person ("Mei is ill", "Jake said", "Tom's dad").
COMMON_START = frozenset(
    """today tomorrow tonight yesterday everyone everybody everything someone somebody something nobody
    nothing anyone anybody anything none life work school dinner lunch breakfast food coffee tea weather
    traffic time sleep home house family people friends friend money rain snow sun music movie film game
    class exam homework job office meeting party trip travel weekend morning evening night afternoon day
    week month year summer winter spring autumn fall last next sorry please well anyway actually
    honestly basically seriously maybe perhaps sure right wow yeah yep yup nope haha great good nice
    cool awesome fine bad sad happy glad still again later soon even love hope wish whatever let baby
    kids kid boss teacher doctor guys man dude bro girl boy guy lady that's it's there's here's what's
    who's let's life's today's tomorrow's everyone's nobody's news story book phone mine one two three
    first second both each every lots plenty never always often sometimes usually someday see look
    listen wait stop go come get make take give keep try ask call text congrats congratulations merry
    wonderful amazing weird funny strange crazy same sounds sound bye goodbye goodnight true false""".split())
# Ordinary words that are names too: at a sentence start a name only before "said"/"told"..., in the
# middle of one only after "told"/"asked"/"met"... ("I asked June", not "in June")
NAME_WORDS = frozenset(
    """will may june april august rose hope faith grace joy mark bill pat sue jack frank summer dawn ivy
    iris lily daisy ruby pearl jade amber holly ray""".split())
_SAYS = frozenset("said says told tells asked asks texted texts called calls messaged wrote replied".split())
_PERSON_NEXT = _SAYS | frozenset(
    """thinks thought wants wanted loves loved hates hated likes liked feels felt kept keeps lives lived
    works worked went goes came comes moved got gets has had is was isn't wasn't hasn't won't can't
    couldn't didn't doesn't cried cries laughed left broke died needs needed knows knew seems looks just
    always never still really""".split())
_PERSON_BEFORE = frozenset(
    "told tell asked ask met meet called call texted text visited visit saw hugged miss missed thank "
    "thanked invited married".split())
_NEXT_WORDS = re.compile(r"[\s,]+([A-Za-z'’]+)(?:\s+([A-Za-z]+))?")


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
        elif low in NAME_WORDS and _word_before(text, m.start()) in _PERSON_BEFORE:
            out.add(word)  # "I asked June", not "in June"
    return out


def given_names(name: str) -> set[str]:
    """What friends may call someone named ``name``: the given name of a Chinese name after its
    surname (张婷婷: 婷婷, 欧阳娜娜: 娜娜; not the one character of 张伟), the first of an English
    name of two or three capitalised words (Mei Chen: Mei; not "The Dark Knight")."""
    if _ANY_CJK.match(name[:1]):
        if not all(_ANY_CJK.match(c) for c in name):
            return set()
        cut = 2 if name[:2] in _zh.COMPOUND_SURNAMES else 1 if name[0] in _zh.SURNAMES else 0
        given = name[cut:]
        return {given} if cut and len(given) == 2 and given not in _zh.NOT_NAMES else set()
    words = name.split()
    first = words[0] if 2 <= len(words) <= 3 and all(_CAPITALISED.fullmatch(w) for w in words) else ""
    return {first} if len(first) >= 3 and not ordinary_word(first) else set()


def ordinary_word(word: str) -> bool:
    """Whether ``word`` is a common English word too ("will", "May", "Hope", "today")."""
    low = word.lower()
    return (low in STOP_EN or low in COMMON_START or low in COMMON_CAPITALISED or low in NAME_WORDS
            or _LANGUAGE.search(low) is not None)


def common_word(name: str) -> bool:
    """Whether ``name`` is also ordinary text, so finding it in a line does not show the line is
    about someone who went by it: each Latin word of it an ordinary English word ("the", "Will",
    "May"), or Chinese that jieba's dictionary counts ``COMMON_IN_JIEBA`` times or more (今天, 安静;
    a famous person's name too, 李娜) or a function word. A name with anything else in it (a digit,
    an emoji, a rare word) is not."""
    parts = [p for p in re.split(r"[^\w]+|_", name.strip()) if p]
    if not parts:
        return True
    counts = _zh.dictionary_counts(p for p in parts if _ANY_CJK.search(p))
    return all((p in STOP_ZH or counts.get(p, 0) >= _zh.COMMON_IN_JIEBA) if _ANY_CJK.search(p)
               else (ordinary_word(p) or p.lower() in STOP_EN) and not p.isdigit() for p in parts)


def names_at_starts(text: str) -> set[str]:
    """Words written capitalised at the start of a sentence that what follows shows to be names:
    "Mei is ill", "Jake said", "Tom's dad", "Sarah and I", "Jake说" (see ``COMMON_START``)."""
    out = set()
    for m in _CAPITALISED.finditer(text):
        if not _starts_sentence(text, m.start()) or _attached(text, m.start(), m.end()):
            continue
        word, rest = m.group(), text[m.end():]
        low = word.lower()
        gerund = len(low) >= 6 and low.endswith("ing")  # "Cooking is fun" (but "Ming is ill")
        ordinary = ordinary_word(low) or gerund
        follows = _NEXT_WORDS.match(rest)
        first, second = (follows.group(1).lower(), (follows.group(2) or "").lower()) if follows else ("", "")
        if low in NAME_WORDS or gerund:
            named = first in _SAYS or bool(_ANY_CJK.match(rest[:1]))
        else:
            named = not ordinary and (
                bool(_ANY_CJK.match(rest[:1])) or rest[:2] in ("'s", "’s") or first in _PERSON_NEXT
                or (first == "and" and second in ("i", "me")))
        if named:
            out.add(word)
    return out


def guess_names(texts: Sequence[str]) -> list[set[str]]:
    """Each text's person names as guessed from the text alone: ``@``-mentions, English names in
    the middle of a sentence and at its start, Chinese names (in a child process)."""
    texts = list(texts)
    return [mentions(t) | english_names(t) | names_at_starts(t) | zh
            for t, zh in zip(texts, chinese_names_apart(texts))]


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


def _word_before(text: str, at: int) -> str:
    words = _WORD.findall(text[max(0, at - 20):at])
    return words[-1].lower() if words else ""


def _starts_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(_OPENING)
    return not before or before[-1] in _SENTENCE_END


def _attached(text: str, start: int, end: int) -> bool:
    """Part of a longer token (``iPhone``, ``x.Com``, ``#Tag``): not a word of its own."""
    return (start > 0 and (text[start - 1].isalnum() and not _ANY_CJK.match(text[start - 1])
                           or text[start - 1] in "#@/.\\_")) or (end < len(text) and text[end].isdigit())
