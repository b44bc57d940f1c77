"""An opt-out list written wrongly keeps what can be read of it: the places it names stay unrecorded."""

from __future__ import annotations

import logging

import pytest

from astrbot_plugin_engram.plugin.config import parse_settings


@pytest.mark.parametrize(("value", "kept"), [
    ("qq:group:5", ("qq:group:5",)),
    ("  ", ()),
    (["qq:group:5", 7.5, None, True, {"id": 1}, 12], ("qq:group:5", "12")),
    (17, ()),
])
def test_a_wrongly_written_opt_out_list_keeps_its_places_and_says_so(
        value: object, kept: tuple[str, ...], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        settings, errors = parse_settings({"blacklist_spaces": value})
    assert settings.blacklist_spaces == kept
    assert len(errors) == 1 and "'blacklist_spaces'" in errors[0] and errors[0] in caplog.text
    for place in kept:
        assert settings.is_blacklisted(place if ":" in place else f"qq:group:{place}")


def test_a_well_written_opt_out_list_says_nothing() -> None:
    settings, errors = parse_settings({"blacklist_spaces": ["qq:group:5", "6"]})
    assert settings.blacklist_spaces == ("qq:group:5", "6") and not errors
