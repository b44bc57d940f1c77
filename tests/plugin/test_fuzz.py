"""Fuzzing every surface with hypothesis (``tests/fuzzing.py`` says what counts as unhandled): a few
hundred generated inputs each here, 100,000 in ``bench/fuzz.py``. Each finding is fixed with its own
regression test (tests/test_fuzz_findings.py, tests/index/test_embed_race.py)."""

from __future__ import annotations

import pytest

from ..fuzzing import SURFACES, run_surface

# inputs per surface: about four seconds each on a quiet machine (merging embeds and compares per input)
COUNTS = {"commands": 300, "hooks": 200, "tools": 200, "dashboard": 200, "consolidation": 200,
          "merging": 60, "diary": 200, "self_image": 200}


@pytest.mark.parametrize("name", list(SURFACES))
def test_no_generated_input_goes_unhandled(name: str) -> None:
    findings = run_surface(SURFACES[name], COUNTS[name], seed=0)  # the same inputs each run: no flaky
    # suite; bench/fuzz.py draws new ones each run
    assert findings.tried >= COUNTS[name] // 2, f"hypothesis generated only {findings.tried} inputs"
    assert not findings.found, "\n\n".join(f"{kind}\n{detail}" for kind, detail in findings.found.items())
