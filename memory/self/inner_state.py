"""The inner state: mood, energy and what has been on the bot's mind, moved by its days.

The diary job updates it with one short model call (without a model it stays as it is); between
updates it drifts back toward the persona's baseline, halving its distance every ``half_life_hours``.
Mood and energy are the bot's own (scope ``self``: they may show anywhere, and a mood naming anyone
is refused; the prompt lists the private names to leave out); what is on its mind comes from every
place's days, so like an ``owner`` memory it is said only in the owner's private chat.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from ..chat import ChatModel
from ..clock import age
from ..model import aware, now_utc
from ..prompts.answers import WrongShape, json_object, number_field, text_field
from ..prompts.templates import language, templates
from ..text.display import flat
from .identity import FOLDER, atomic_write
from .private_details import PrivateDetails, kinds, leaks, names_to_leave_out

log = logging.getLogger("engram.inner_state")

STATE_FILE = "inner-state.json"
MAX_MOOD, MAX_ON_MIND = 40, 300
TIMEOUT = 60.0
_reported: set[str] = set()  # unreadable state files already logged (read before every reply)


@dataclass(frozen=True)
class InnerState:
    mood: str = "calm"
    valence: float = 0.0  # -1 low .. 1 happy
    energy: float = 0.6  # 0 tired .. 1 lively
    on_mind: str = ""
    updated_at: str = ""  # ISO time of the last update ("": the baseline itself)
    day: str = ""  # the day whose diary moved it (ISO date; "": unknown): a forget of it resets the state


@dataclass(frozen=True)
class Baseline:
    """Where the state drifts back to (the persona's resting state) and how fast."""

    mood: str = "calm"
    valence: float = 0.0
    energy: float = 0.6
    half_life_hours: float = 6.0

    def state(self) -> InnerState:
        return InnerState(self.mood, self.valence, self.energy)


def state_path(folder: Path) -> Path:
    return Path(folder) / FOLDER / STATE_FILE


def load_state(folder: Path) -> InnerState | None:
    """The saved state, or None (none saved yet, or an unreadable file: logged)."""
    path = state_path(folder)
    try:
        data = json.loads(path.read_text("utf-8"))
        updated_at = str(data.get("updated_at", ""))
        if updated_at:
            datetime.fromisoformat(updated_at)  # read before every reply: it must parse here, not there
        return InnerState(str(data["mood"]), float(data["valence"]), float(data["energy"]),
                          str(data.get("on_mind", "")), updated_at, str(data.get("day", "")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        problem = f"{path} cannot be read ({e}); the baseline mood is used"
        if problem not in _reported:
            _reported.add(problem)
            log.error("Engram: %s", problem)
        return None


def current(saved: InnerState | None, baseline: Baseline, now: datetime) -> InnerState:
    """The state at ``now``: the saved one, drifted back toward the baseline since it was saved."""
    if saved is None or not saved.updated_at:
        return baseline.state()
    hours = age(datetime.fromisoformat(saved.updated_at), now).total_seconds() / 3600
    w = 0.5 ** (hours / baseline.half_life_hours)
    return replace(saved, valence=baseline.valence + (saved.valence - baseline.valence) * w,
                   energy=baseline.energy + (saved.energy - baseline.energy) * w,
                   mood=saved.mood if w >= 0.25 else baseline.mood,
                   on_mind=saved.on_mind if w >= 0.125 else "")


def sentence(state: InnerState, *, owner_private: bool) -> str:
    """One sentence for the injected block; what is on its mind only in the owner's private chat."""
    energy = "tired" if state.energy < 0.3 else "lively" if state.energy >= 0.7 else "steady"
    feel = "low" if state.valence < -0.3 else "bright" if state.valence > 0.3 else "even"
    out = f"How you feel: {flat(state.mood)} (spirits {feel}, energy {energy})."
    if owner_private and flat(state.on_mind):  # one line, whatever the model or a hand edit wrote
        out = out[:-1] + f"; on your mind lately: {flat(state.on_mind)}"
    return out


async def update_inner_state(chat_model: ChatModel, entry: str, day: str, *, folder: Path,
                             persona: str = "", details: PrivateDetails | None = None,
                             now: datetime | None = None) -> InnerState:
    """Move the state from a day's diary ``entry`` (one call); a failure or a wrong answer changes nothing."""
    lang = language([entry])
    system, user = templates("inner_state", lang)
    reply = await chat_model.complete(
        [{"role": "system", "content": system},
         {"role": "user", "content": user.safe_substitute(
             persona=persona or "-", day=day, entry=entry,
             leave_out=names_to_leave_out(details or PrivateDetails(), lang))}],
        json=True, timeout=TIMEOUT)
    obj = json_object(reply.text, ("mood", "valence", "energy"))
    state = InnerState(text_field(obj, "mood", MAX_MOOD), number_field(obj, "valence", -1.0, 1.0),
                       number_field(obj, "energy", 0.0, 1.0),
                       text_field(obj, "on_mind", MAX_ON_MIND) if obj.get("on_mind") else "",
                       aware(now or now_utc()).isoformat(), day)
    found = leaks(state.mood, details) if details is not None else []
    if found:
        raise WrongShape(f"the mood names private details ({kinds(found)})")  # logged: never the details
    atomic_write(state_path(folder), json.dumps(asdict(state), ensure_ascii=False, indent=1))
    return state
