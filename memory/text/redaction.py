"""Secrets in what is said, redacted before it is recorded: API keys, tokens, passwords, card numbers.

A message holding one is stored with the secret replaced by ``[redacted]``, so the secret never
reaches the store's file, the journal beside it, a model's prompt, the dashboard or an export; the
episode's meta counts how many were taken out (``redacted``), and the store keeps the total (``/mem
stats``). Patterns match the real formats (OpenAI ``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, GitHub
``ghp_``/``github_pat_``, AWS access key ids and 40-character secrets, Google ``AIza``, Slack
``xox*-``, Stripe ``sk_live_``, JWTs, ``Bearer`` tokens, PEM private keys), passwords written as such in
English ("my password is ...", "pwd: ...") and Chinese ("密码是...", "密码：..."), and card numbers
(13 to 19 digits passing the Luhn check). The owner may add patterns (``redact_patterns``); a pattern
with a group named ``secret`` redacts only that group.

Redacting twice changes nothing more (``[redacted]`` matches no pattern), so the plugin redacts before
its journal and the core again before the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import InvalidInputError
from ..model import Episode

REDACTED = "[redacted]"
META_KEY = "redacted"  # in an episode's meta: how many secrets its text had
MAX_PATTERNS = 50
MAX_PATTERN_CHARS = 500
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


# A text none of the default patterns can match has none of these: a password's label (matched as
# loosely as the patterns match it), a run of 12 or more key characters (every key and token pattern
# needs one: keys, tokens, JWTs, a bearer token's value, a 40-character key), 13 digits of a card.
# Most messages have none, so three quick scans spare them the fourteen patterns (13 -> ~2.5 µs a
# message; redaction was a fifth of recording's CPU). Checked against the patterns themselves by a
# property test (tests/test_secrets.py).
_SCREENS = (re.compile(r"(?i)p(?:as|wd|in)|-----BEGIN|密码|口令|密碼|验证码"),
            re.compile(r"[A-Za-z0-9_\-./+=~]{12}"), re.compile(r"\d(?:[ -]?\d){12}"))


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


def _looks_secret(kind: str, found: str) -> bool:
    """The checks a pattern alone cannot make: a card number passes Luhn; a 40-character secret key
    mixes upper and lower case and digits (a git hash or a word run does not); a password is not an
    ordinary word that only follows its label."""
    if kind == "password":
        return found.lower().rstrip(".") not in _NOT_A_PASSWORD
    if kind == "card number":
        digits = re.sub(r"\D", "", found)
        return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn(digits)
    if kind == "secret key":
        return (any(c.isupper() for c in found) and any(c.islower() for c in found)
                and any(c.isdigit() for c in found))
    return True


@dataclass(frozen=True)
class Redactor:
    """The patterns secrets are found by; ``enabled=False`` keeps every text as it is."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    enabled: bool = True

    def redact(self, text: str, *, screened: bool = True) -> tuple[str, int]:
        """``text`` with each secret replaced by ``[redacted]``, and how many there were
        (``screened=False``: every default pattern tried even when the screen finds nothing)."""
        if not self.enabled or not text:
            return text, 0
        patterns = self.patterns
        if screened and not _may_hold_secret(text):  # the owner's own patterns still run
            patterns = tuple(p for p in patterns if p[0] == CUSTOM)
        count = 0
        for kind, pattern in patterns:
            def one(m: re.Match[str], kind: str = kind) -> str:
                nonlocal count
                group = "secret" if "secret" in m.re.groupindex and m.group("secret") else 0
                if not _looks_secret(kind, m.group(group)) or m.group(group) == REDACTED:
                    return m.group(0)
                count += 1
                start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
                return m.group(0)[:start] + REDACTED + m.group(0)[end:]
            text = pattern.sub(one, text)
        return text, count

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
    not compile, or too many or too long, is an ``InvalidInputError`` naming it."""
    if len(extra) > MAX_PATTERNS:
        raise InvalidInputError(f"at most {MAX_PATTERNS} redaction patterns, got {len(extra)}")
    compiled = [(kind, re.compile(p)) for kind, p in DEFAULT_PATTERNS]
    for p in extra:
        if not isinstance(p, str) or not p or len(p) > MAX_PATTERN_CHARS:
            raise InvalidInputError(f"a redaction pattern must be 1 to {MAX_PATTERN_CHARS} characters: {p!r}")
        try:
            compiled.insert(0, (CUSTOM, re.compile(p)))
        except re.error as e:
            raise InvalidInputError(f"redaction pattern {p!r} is not a regular expression: {e}") from None
    return Redactor(tuple(compiled), enabled)


DEFAULT = redactor()
