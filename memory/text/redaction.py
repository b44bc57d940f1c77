"""Secrets in what is said, redacted before it is recorded: API keys, tokens, passwords, card numbers.

A message holding one is stored with the secret replaced by ``[redacted]``, so the secret never
reaches the store's file, the journal beside it, a model's prompt, the dashboard or an export; the
episode's meta counts how many were taken out (``redacted``), and the store keeps the total (``/mem
stats``). Patterns match the real formats (OpenAI ``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, GitHub
``ghp_``/``github_pat_``, AWS access key ids and 40-character secrets, Google ``AIza``, Slack
``xox*-``, Stripe ``sk_live_``, JWTs, ``Bearer`` tokens, PEM private keys), passwords written as such in
English ("my password is ...", "pwd: ...") and Chinese ("密码是...", "密码：..."), and card numbers
(``_card``: 13 to 19 digits passing the Luhn check, starting as card numbers start, 2 to 6, and
written as cards are, in groups, or with a word for a card just before: a bare run of digits that
passes Luhn by chance, a millisecond timestamp, an order number, is kept). The owner may add
patterns (``redact_patterns``); a pattern with a group named ``secret`` redacts only that group.

An owner's pattern runs on every message, so one that backtracks without end (``(a|aa)+$``) would
hang recording. Such patterns are compiled with the ``regex`` module (AstrBot brings it: dashscope ->
tiktoken -> regex), which bounds a match in time: at load each is tried on long runs of the characters
it names and of the common character classes, and one that takes longer than ``PROBE_SECONDS`` is
refused with a clear error (the config names it and leaves it out); at run time a match that still
takes longer than ``MATCH_SECONDS`` switches that pattern off until the next start (one error line in
the log, naming its position, not its text), and the message is recorded with the other patterns.

Redacting twice changes nothing more (``[redacted]`` matches no pattern), so the plugin redacts before
its journal and the core again before the store.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import regex

from ..errors import InvalidInputError
from ..model import Episode

REDACTED = "[redacted]"
META_KEY = "redacted"  # in an episode's meta: how many secrets its text had
MAX_PATTERNS = 50
MAX_PATTERN_CHARS = 500
PROBE_SECONDS = 0.5  # an owner's pattern on one probe text at load (a sound one takes microseconds)
MATCH_SECONDS = 1.0  # an owner's pattern on one message, before it is switched off
PROBE_CHARS = 60  # the length of each probe text's run
_PROBE_RUNS = "a1 A_-.:/密"  # one of each common character class, run long in the probe texts
log = logging.getLogger("engram.redaction")
CUSTOM = "custom"  # the kind of an owner's own pattern

_VALUE = r"(?P<secret>[^\s，。,;；!！?？、]{2,128})"  # a password as written after its label
DEFAULT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    ("api key", r"(?<![\w-])sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("api key", r"(?<![\w-])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("token", r"(?<!\w)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    ("token", r"(?<!\w)github_pat_[A-Za-z0-9_]{22,}"),
    ("token", r"(?<!\w)xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("api key", r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}"),
    ("access key", r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ("token", r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("token", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})"),
    ("password", r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|pin)(?:\s+(?:is|was)\s*:?|\s*[:=：])\s*"
                 + _VALUE),
    ("password", r"(?:密码|口令|密碼|支付密码|登录密码|验证码|PIN码|pin码)\s*(?:是|为|為|：|:|=)\s*"
                 + _VALUE),
    # checked: mixed case and digits
    ("secret key", r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
    ("card number", r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)"),  # checked: Luhn
)


_CARD_GROUPS = re.compile(r"\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{1,3})?|\d{4}([ -])\d{6}\2\d{5}")
_CARD_WORDS = re.compile(r"(?i)(?:card|visa|master\s*card|amex|american express|credit|debit|discover|"
                         r"unionpay|jcb|cc\b|卡)")
CARD_CONTEXT = 30  # characters before a bare run of digits where a word for a card makes it one


def _card(found: str, before: str) -> bool:
    """Whether the digits ``found`` (after the text ``before``) are a card number: they pass Luhn, start
    with 2-6 (Mastercard 2/5, Amex and Diners 3, Visa 4, Discover and UnionPay 6; a timestamp in
    milliseconds starts with 1 until the year 2286), and are written in a card's groups (4-4-4-4,
    4-6-5) or follow a word for a card (card, visa, credit, 卡...) within ``CARD_CONTEXT`` characters."""
    digits = re.sub(r"\D", "", found)
    if not (13 <= len(digits) <= 19 and len(set(digits)) > 1 and digits[0] in "23456" and _luhn(digits)):
        return False
    return bool(_CARD_GROUPS.fullmatch(found)) or bool(_CARD_WORDS.search(before[-CARD_CONTEXT:]))


# A text none of the default patterns can match has none of these: a password's label followed by
# what follows one in the patterns (a space, ":", "=" or "："; a Chinese label as it is), a private key's
# first line, the fixed start of each key and token format (sk-, ghp_, AIza, eyJ, bearer...), a run
# of 40 characters of a 40-character key, 13 digits of a card. Most messages have none, so three quick
# scans spare them the fourteen patterns (13 -> ~2.5 µs a message; redaction was a fifth of
# recording's CPU). Only the fixed starts, not any run of 12 key characters: a long English word
# ("relationship") sent a fifth of ordinary messages through all fourteen. Checked against the
# patterns themselves by property tests (tests/test_secrets.py).
_SCREENS = (re.compile(r"(?i)\b(?:passw(?:or)?d|passphrase|passcode|pwd|pin)[\s:=：]|-----BEGIN"
                       r"|密码|口令|密碼|验证码|PIN码|pin码"),
            re.compile(r"sk-|[srp]k_(?:live|test)_|gh[pousr]_|github_pat_|xox[abposr]-|AIza"
                       r"|A(?:KIA|SIA|GPA|IDA|ROA)|eyJ|(?i:bearer)|[A-Za-z0-9/+]{40}"),
            re.compile(r"\d(?:[ -]?\d){12}"))


def _may_hold_secret(text: str) -> bool:
    return any(screen.search(text) for screen in _SCREENS)


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


# what follows "the password is" without being one ("the password is on the fridge")
_NOT_A_PASSWORD = frozenset("""on in at the a an not still written same different wrong right correct
    incorrect too very so that this it here there below above changed reset expired required empty
    blank weak strong secret safe set what which easy hard long short my your his her our their""".split())


def _looks_secret(kind: str, found: str, before: str = "") -> bool:
    """The checks a pattern alone cannot make: a card number is one (``_card``); a 40-character secret key
    mixes upper and lower case and digits (a git hash or a word run does not); a password is not an
    ordinary word that only follows its label."""
    if kind == "password":
        return found.lower().rstrip(".") not in _NOT_A_PASSWORD
    if kind == "card number":
        return _card(found, before)
    if kind == "secret key":
        return (any(c.isupper() for c in found) and any(c.islower() for c in found)
                and any(c.isdigit() for c in found))
    return True


@dataclass(frozen=True)
class Redactor:
    """The patterns secrets are found by; ``enabled=False`` keeps every text as it is. The owner's
    (``custom``) patterns are ``regex`` patterns, run with a time bound (``MATCH_SECONDS``)."""

    patterns: tuple[tuple[str, Any], ...] = ()
    enabled: bool = True
    switched_off: set[int] = field(default_factory=set, compare=False)  # owner's patterns that ran too long

    def redact(self, text: str, *, screened: bool = True) -> tuple[str, int]:
        """``text`` with each secret replaced by ``[redacted]``, and how many there were
        (``screened=False``: every default pattern tried even when the screen finds nothing)."""
        if not self.enabled or not text:
            return text, 0
        only_custom = screened and not _may_hold_secret(text)  # the owner's own patterns still run
        count = 0
        for i, (kind, pattern) in enumerate(self.patterns):
            if i in self.switched_off or (only_custom and kind != CUSTOM):
                continue

            def one(m: Any, kind: str = kind) -> str:
                nonlocal count
                group = "secret" if "secret" in m.re.groupindex and m.group("secret") else 0
                if (not _looks_secret(kind, m.group(group), m.string[:m.start(group)])
                        or m.group(group) == REDACTED):
                    return str(m.group(0))
                count += 1
                start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
                return str(m.group(0)[:start] + REDACTED + m.group(0)[end:])
            if kind != CUSTOM:
                text = pattern.sub(one, text)
                continue
            before = count
            try:
                text = pattern.sub(one, text, timeout=MATCH_SECONDS)
            except TimeoutError:  # nothing of this pattern applied (sub returns nothing part-done)
                count = before
                self.switched_off.add(i)
                log.error("Engram: the redaction pattern #%d of redact_patterns took longer than %.1f s on a "
                          "message of %d characters; it is switched off until the next start (the message "
                          "was recorded with the other patterns): make it one that cannot backtrack without "
                          "end", self._position(i), MATCH_SECONDS, len(text))
        return text, count

    def _position(self, i: int) -> int:
        """The owner's number for pattern ``i`` (1: the first in ``redact_patterns``)."""
        custom = [j for j, (kind, _) in enumerate(self.patterns) if kind == CUSTOM]
        return len(custom) - custom.index(i)

    def episode(self, ep: Episode) -> Episode:
        """``ep`` with its text redacted, and the count added to its meta (the episode itself if
        nothing was found)."""
        if not isinstance(ep.content, str):  # refused by the check before the store, not here
            return ep
        content, n = self.redact(ep.content)
        if not n:
            return ep
        before = int(ep.meta.get(META_KEY, 0) or 0)
        return replace(ep, content=content, meta={**ep.meta, META_KEY: before + n})


def redactor(extra: Sequence[str] = (), *, enabled: bool = True) -> Redactor:
    """The default patterns and the owner's ``extra`` ones (regular expressions); a pattern that does
    not compile, takes too long on a probe text (``_probe``), or too many or too long, is an
    ``InvalidInputError`` naming it."""
    if len(extra) > MAX_PATTERNS:
        raise InvalidInputError(f"at most {MAX_PATTERNS} redaction patterns, got {len(extra)}")
    compiled: list[tuple[str, Any]] = [(kind, re.compile(p)) for kind, p in DEFAULT_PATTERNS]
    for p in extra:
        if not isinstance(p, str) or not p or len(p) > MAX_PATTERN_CHARS:
            raise InvalidInputError(f"a redaction pattern must be 1 to {MAX_PATTERN_CHARS} characters: {p!r}")
        try:
            pattern = regex.compile(p, flags=regex.VERSION0)  # the ``re`` syntax
        except regex.error as e:
            raise InvalidInputError(f"redaction pattern {p!r} is not a regular expression: {e}") from None
        _probe(p, pattern)
        compiled.insert(0, (CUSTOM, pattern))
    return Redactor(tuple(compiled), enabled)


def _probe(source: str, pattern: Any) -> None:
    """Refuse ``pattern`` when it takes longer than ``PROBE_SECONDS`` on a long run of one of the
    characters it names or of a common class, ended by one that breaks the run, alone or after a
    literal piece of the pattern ("pin " in ``pin (\\d|\\d\\d)+x``): where a pattern that backtracks
    without end shows it."""
    runs = dict.fromkeys(c for c in source + _PROBE_RUNS if c.isprintable() and c not in _META)
    starts = ["", *dict.fromkeys(p for p in _LITERAL.findall(source) if p.strip())]
    for start in starts:
        for c in runs:
            for end in ("!", "\0", " x"):
                try:
                    pattern.search(start + c * PROBE_CHARS + end, timeout=PROBE_SECONDS)
                except TimeoutError:
                    raise InvalidInputError(
                        f"redaction pattern {source!r} takes longer than {PROBE_SECONDS} s on {PROBE_CHARS} "
                        f"{c!r} in a row: it backtracks without end and would hold up recording") from None


_META = "\\()[]{}|?*+^$."
_LITERAL = re.compile(r"(?:[^\\()\[\]{}|?*+^$.]|\\[^A-Za-z0-9])+")  # a piece of a pattern matching itself


DEFAULT = redactor()
