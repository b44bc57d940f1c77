"""The dashboard's recall explained shows the block the plugin injects: a person is named as the
place asked about knows them, never by a name heard in another place (issue 9, hole 5)."""

from __future__ import annotations

from astrbot_plugin_engram.memory import Audience, Engram, Episode, Memory
from astrbot_plugin_engram.memory.compose import Composer
from astrbot_plugin_engram.memory.self.diary_files import data_folder
from astrbot_plugin_engram.memory.self.selfhood import BlockDefaults, Selfhood

G1, G2, G3 = "qq:group:g1", "qq:group:g2", "qq:group:g3"


async def test_the_block_names_a_person_as_this_place_knows_them(engram: Engram) -> None:
    await engram.record_many([Episode(G1, "hello all", "qq:u1", "Ann"),
                              Episode(G2, "hi from my other group", "qq:u1",
                                      "Ann from Accounting, secretly")])
    for place in (G1, G3):
        await engram.add_memory(Memory("likes green tea", f"space:{place}", subjects=("qq:u1",)))
    await engram.embed_pending()
    blocks = {}
    composer = Composer(Selfhood(data_folder(engram), BlockDefaults(), read_only=True))
    for place in (G1, G3):
        shown = await composer.explain(engram, Audience(place=place), "green tea")  # recall explained's
        assert any(isinstance(h.item, Memory) for h in shown.injected)
        blocks[place] = shown.text
    assert "about Ann:" in blocks[G1] and "secretly" not in blocks[G1]
    assert "about u1:" in blocks[G3] and "Ann" not in blocks[G3]
