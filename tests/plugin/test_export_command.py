"""``/mem export`` (issue 30): the owner's private chat only; the bundle goes into the plugin's data
folder and the reply says where and how large. A forget afterwards says the export still holds what
it erased (with its folder in the owner's private chat only)."""

from __future__ import annotations

from pathlib import Path

from astrbot_plugin_engram.memory.bundle import read_bundle
from astrbot_plugin_engram.plugin.service import EngramService

from .test_forget_commands import code_of, mem, seed


async def test_the_owner_exports_into_the_data_folder_and_is_told_where_and_how_large(
        service: EngramService) -> None:
    await seed(service)
    said = await mem(service, "mem export")
    folder = Path(said.split(" to ", 1)[1].split(" (", 1)[0])
    assert folder.parent == service.data_dir.resolve() / "exports"
    assert " MB in " in said and "3 lines" in said
    bundle = read_bundle(folder)  # a whole, valid bundle
    assert [e.content for e in bundle.episodes][0] == "my bike lock code is 4471"


async def test_export_is_refused_outside_the_owners_private_chat(service: EngramService) -> None:
    await seed(service)
    said = await mem(service, "mem export", group="g1")
    assert "only in the owner's private chat" in said
    assert not (service.data_dir / "exports").exists()


async def test_a_forget_after_an_export_says_the_export_still_holds_it(service: EngramService) -> None:
    ids = await seed(service)
    exported = await mem(service, "mem export")
    folder = exported.split(" to ", 1)[1].split(" (", 1)[0]
    said = await mem(service, f"mem forget e{ids[2]}")
    assert "1 earlier export(s) still hold the forgotten text" in said and folder in said
    asked = await mem(service, "mem forget-person Carol", group="g1")
    done = await mem(service, f"mem confirm {code_of(asked)}", group="g1")
    assert "The owner's 1 earlier export(s) may still hold it." in done and folder not in done
    await mem(service, "mem export")  # written again later: a new bundle, without what was forgotten
    latest = sorted((service.data_dir / "exports").iterdir())[-1]
    assert "4471" not in "".join(p.read_text("utf-8") for p in latest.rglob("*.jsonl"))
