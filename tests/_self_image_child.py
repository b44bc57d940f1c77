"""Child process of test_self_image_durability: writes a new self-image, pausing between its two
writes (the file and the memory, whichever comes first) until the parent's SIGKILL.

Run as ``python -m tests._self_image_child PATH TEXT`` from the repository root; it prints
``between`` when the first of the two writes is done, then sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from astrbot_plugin_engram.memory import Engram, NoEmbedder
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.self_image import write_self_image

from .scripted_chat import ScriptedChat

done: list[str] = []


def pausing(name: str, write: Any) -> Any:
    """``write``, which, when the other of the two writes is done already, says so and sleeps."""
    if asyncio.iscoroutinefunction(write):
        async def later(*args: Any, **kwargs: Any) -> Any:
            if done:
                os.write(1, b"between\n")
                await asyncio.sleep(60)
            result = await write(*args, **kwargs)
            done.append(name)
            return result
        return later

    def now(*args: Any, **kwargs: Any) -> Any:
        if done:
            os.write(1, b"between\n")
            import time
            time.sleep(60)
        result = write(*args, **kwargs)
        done.append(name)
        return result
    return now


async def main(path: str, text: str) -> None:
    eng = await Engram.open(path, NoEmbedder(), background=False)
    Engram.update = pausing("memory", Engram.update)  # type: ignore[method-assign]
    Engram.add_memory = pausing("memory", Engram.add_memory)  # type: ignore[method-assign]
    Engram.commit_memories = pausing("memory", Engram.commit_memories)  # type: ignore[method-assign]
    IdentityFolder.replace = pausing("file", IdentityFolder.replace)  # type: ignore[method-assign]
    await write_self_image(eng, ScriptedChat(json.dumps({"self_image": text})), folder=Path(path).parent)
    os.write(1, b"done\n")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
