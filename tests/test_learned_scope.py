"""The scope rule for what a model derived: whatever it proposes, code only narrows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from astrbot_plugin_engram.memory.scopes import OWNER, PUBLIC, SELF, learned_scope, may_write, place_scope

HINTS = st.one_of(st.none(), st.sampled_from(["public", "self", "owner", "space:qq:group:9", "space:web",
                                              "", "  public ", "everywhere"]), st.text(max_size=12))


@given(hint=HINTS, people=st.booleans(), owner=st.booleans(), public=st.booleans(), own=st.booleans(),
       place=st.sampled_from(["web", "qq:group:1", "qq:private:7"]))
def test_a_proposal_never_widens_the_scope(hint: str | None, people: bool, owner: bool, public: bool,
                                           own: bool, place: str) -> None:
    got = learned_scope(hint, place, about_people=people, owner_private=owner, public_place=public,
                        own_thoughts=own).scope
    home = OWNER if owner or own else place_scope(place)
    assert got in (home, OWNER, PUBLIC, SELF)
    if people or not public or own:
        assert got in (home, OWNER)  # about people, or not learned in a public place, or its own thoughts
    if own:
        assert got == OWNER


def test_only_a_fact_about_no_one_in_a_public_place_goes_public() -> None:
    assert learned_scope("public", "web", about_people=False, public_place=True).scope == PUBLIC
    assert learned_scope("public", "web", about_people=True, public_place=True).scope == "space:web"
    assert learned_scope("public", "qq:group:1", about_people=False).scope == "space:qq:group:1"
    assert learned_scope(None, "web", about_people=False, public_place=True).scope == "space:web"
    wide = learned_scope("space:qq:group:2", "qq:group:1", about_people=False)
    assert (wide.scope, wide.widened) == ("space:qq:group:1", True)


def test_an_update_keeps_a_scope_the_place_could_have_written() -> None:
    assert may_write("space:qq:group:1", "qq:group:1", about_people=True)
    assert not may_write("public", "qq:group:1", about_people=False)
    assert may_write("public", "web", about_people=False, public_place=True)
    assert not may_write("public", "web", about_people=True, public_place=True)
    assert not may_write("space:qq:group:2", "qq:group:1", about_people=False)
