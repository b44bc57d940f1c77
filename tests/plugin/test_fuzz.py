"""Fuzzing every surface with hypothesis (``tests/fuzzing.py`` says what counts as unhandled): a few
hundred generated inputs each here, 100,000 in ``bench/fuzz.py``. Each finding is fixed with its own
regression test (tests/test_fuzz_findings.py, tests/index/test_embed_race.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ..fuzzing import SURFACES, run_surface

# inputs per surface: about four seconds each on a quiet machine (merging embeds and compares per input)
COUNTS = {"commands": 300, "hooks": 200, "tools": 200, "dashboard": 200, "consolidation": 200,
          "merging": 60, "diary": 200, "self_image": 200, "bundle": 200}


@pytest.mark.parametrize("name", list(SURFACES))
def test_no_generated_input_goes_unhandled(name: str) -> None:
    findings = run_surface(SURFACES[name], COUNTS[name], seed=0)  # the same inputs each run: no flaky
    # suite; bench/fuzz.py draws new ones each run
    assert findings.tried >= COUNTS[name] // 2, f"hypothesis generated only {findings.tried} inputs"
    assert not findings.found, "\n\n".join(f"{kind}\n{detail}" for kind, detail in findings.found.items())


def test_a_long_run_starts_a_fresh_store_every_so_many_inputs_and_checks_the_old_one() -> None:
    """100,000 answers into one store measured the store's growth (each consolidation input's work
    grew with the memories the hostile answers added): the model-answer surfaces renew their store
    every ``renew`` inputs, and the closed store's integrity check still counts as a finding."""
    base = SURFACES["self_image"]
    states: list[Any] = []
    checked: list[Any] = []

    async def setup(folder: Path) -> Any:
        states.append(await base.setup(folder))
        return states[-1]

    async def teardown(state: Any) -> None:
        checked.append(state)
        await base.teardown(state)

    findings = run_surface(replace(base, setup=setup, teardown=teardown, renew=25), 80, seed=1)
    assert findings.tried == 80 and not findings.found
    assert len(states) == 4 and checked == states  # at inputs 25, 50 and 75, and at the end
    assert len({id(s.engram) for s in states}) == 4


def test_a_store_found_damaged_at_a_renewal_is_a_finding() -> None:
    base = SURFACES["diary"]

    async def teardown(state: Any) -> None:
        await base.teardown(state)
        raise AssertionError("the store is damaged after fuzzing: ['planted']")

    findings = run_surface(replace(base, teardown=teardown, renew=10), 25, seed=1)
    assert set(findings.found) == {"AssertionError at a renewal", "AssertionError at the end"}, findings.found
    assert "planted" in findings.found["AssertionError at a renewal"]


def test_the_bundle_fuzzer_reaches_both_the_refusals_and_the_import() -> None:
    """Changed bundles that were all refused at the manifest's checksum would test one line of the
    importer: the resealed ones reach the lines' own checks, and some are imported whole."""
    base, last = SURFACES["bundle"], []

    async def teardown(state: Any) -> None:
        last.append(state)
        await base.teardown(state)

    findings = run_surface(replace(base, teardown=teardown), 150, seed=2)
    assert not findings.found
    assert 10 < last[0].imported < findings.tried - 10, (last[0].imported, findings.tried)
