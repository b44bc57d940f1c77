"""The privacy red team (session 12), in the core: what a model's answer could carry out of the place
it was drawn from. Each test failed before its fix."""

from __future__ import annotations

from astrbot_plugin_engram.memory import Engram, Memory
from astrbot_plugin_engram.memory.scopes import DEFAULT_PUBLIC_PLACES

from .fake_openai import FakeOpenAI
from .test_consolidation import actions, add, ep, memories, run

PUBLIC_PLACE = DEFAULT_PUBLIC_PLACES[0]  # in ConsolidationSettings.public_spaces by default


async def test_an_update_in_a_public_place_cannot_make_a_public_memory_name_someone(
        engram: Engram, fake_openai: FakeOpenAI) -> None:
    """A new memory naming someone seen in a public place stays in that place (the model's "about no
    one" is checked); an update of a public memory was not checked: "Bob is pregnant" went into a
    public memory, and every chat recalled it."""
    await engram.record_many([ep(PUBLIC_PLACE, "the club meets on Fridays", "qq:8", "Bob", minutes=0),
                              ep(PUBLIC_PLACE, "I'm pregnant, so I'll skip it for a while", "qq:8", "Bob",
                                 minutes=1)])
    club = await engram.add_memory(Memory("The club meets on Fridays", "public"))
    fake_openai.replies.append(actions({"op": "update", "id": f"m{club}", "sources": ["e2"],
                                        "text": "The club meets on Fridays; Bob is pregnant and skips it"}))
    report = await run(engram, fake_openai).run(force=True)
    public = [m for m in await memories(engram) if m.scope == "public"]
    assert all("pregnant" not in m.text for m in public), public
    assert report.updated == 0 and sum(report.refused.values()) == 1, report.summary()
    assert (await engram.get(club)).text == "The club meets on Fridays"


async def test_a_new_memory_scoped_self_in_a_public_place_cannot_name_someone(
        engram: Engram, fake_openai: FakeOpenAI) -> None:
    """A new memory the model scoped ``public`` was checked for names seen in the place; one it scoped
    ``self`` (seen in every chat as well) was not: "Bob is pregnant" became the bot's own feeling."""
    await engram.record_many([ep(PUBLIC_PLACE, "I'm pregnant, so I'll skip the club", "qq:8", "Bob")])
    fake_openai.replies.append(actions(add("I am happy that Bob is pregnant", ["e1"], scope="self")))
    report = await run(engram, fake_openai).run(force=True)
    [m] = await memories(engram)
    assert m.scope == f"space:{PUBLIC_PLACE}" and "qq:8" in m.subjects, m
    assert report.refused["wider_scope"] == 1, report.summary()
