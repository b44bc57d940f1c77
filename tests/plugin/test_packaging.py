"""What AstrBot's WebUI shows of the plugin: its metadata and a bilingual label and hint for every key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile("[\u4e00-\u9fff]")


def test_metadata_names_the_repository_and_the_astrbot_versions() -> None:
    meta = yaml.safe_load((ROOT / "metadata.yaml").read_text("utf-8"))
    assert {"name", "desc", "version", "author"} <= set(meta)
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", meta["repo"])
    assert meta["astrbot_version"].startswith(">=4.14")


def test_every_config_key_has_an_english_and_a_chinese_label_and_hint() -> None:
    schema = json.loads((ROOT / "_conf_schema.json").read_text("utf-8"))
    for key, spec in schema.items():
        for field in ("description", "hint"):
            text = spec.get(field, "")
            assert CJK.search(text), f"{key}.{field} has no Chinese: {text!r}"
            assert re.search("[A-Za-z]{3}", CJK.split(text)[0]), f"{key}.{field} has no English first"
