"""Settings: the grouped calibration settings, their defaults, the environment and the fingerprint."""

from __future__ import annotations

import json

import pytest

from engine.config import AnswerSettings, EvidenceSettings, ResearchStepSettings, Settings, load_settings
from engine.errors import ConfigError

# The values the stages had as module constants before they became settings: a change of default is a
# change of behaviour, and must be made here on purpose.
TODAY = {
    "evidence": {"min_quote_words": 10, "min_sentence_words": 6, "max_quote_words": 120, "quote_gap": 0.3,
                 "max_quotes_per_chunk": 3, "extra_candidates": 3, "broad_max_passages": 8,
                 "broad_floor": 0.02, "broad_section_max": 12, "broad_section_window": 2, "commentary_sections": 8,
                 "broad_law_passages": 3,
                 "broad_gate_share": 0.2, "broad_topic_coverage": 0.5,
                 "rival_passages": 2, "named_group_passages": 2},
    "research": {"cosine_floor": 0.25, "cosine_ceiling": 0.65, "answered_by_earlier": 0.8, "max_attempts": 2,
                 "stagnation_delta": 0.05},
    "answer": {"max_parts": 4, "min_part_terms": 1, "max_supporting_per_part": 4, "broad_max_supporting": 12,
               "direct_max_words": 18,
               "same_duty_overlap": 0.6, "option_support": 0.6, "option_margin": 0.15},
}
GROUPS = {"evidence": EvidenceSettings, "research": ResearchStepSettings, "answer": AnswerSettings}
FIELDS = [(group, name) for group, cls in GROUPS.items() for name in cls.model_fields]


def test_defaults_are_the_values_the_stages_had() -> None:
    assert {group: cls().model_dump() for group, cls in GROUPS.items()} == TODAY
    settings = Settings(_env_file=None)
    assert {group: getattr(settings, group).model_dump() for group in GROUPS} == TODAY


@pytest.mark.parametrize(("group", "name"), FIELDS, ids=[f"{g}.{n}" for g, n in FIELDS])
def test_every_threshold_is_in_the_fingerprint(group: str, name: str) -> None:
    base = Settings()
    value = getattr(getattr(base, group), name)
    changed = value + 1 if isinstance(value, int) else round(value + 0.01, 4)
    other = base.model_copy(update={group: getattr(base, group).model_copy(update={name: changed})})
    assert other.fingerprint() != base.fingerprint()
    same = base.model_copy(update={group: GROUPS[group]()})
    assert same.fingerprint() == base.fingerprint()  # equal values, equal hash


def test_a_group_is_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVIDENCE_EVIDENCE__QUOTE_GAP", "0.2")
    monkeypatch.setenv("EVIDENCE_ANSWER__MAX_PARTS", "2")
    settings = load_settings()
    assert settings.evidence.quote_gap == 0.2 and settings.answer.max_parts == 2
    assert settings.evidence.max_quotes_per_chunk == 3  # the rest of the group keeps its defaults
    monkeypatch.delenv("EVIDENCE_EVIDENCE__QUOTE_GAP")
    monkeypatch.delenv("EVIDENCE_ANSWER__MAX_PARTS")
    assert load_settings().fingerprint() != settings.fingerprint()


@pytest.mark.parametrize(("variable", "value", "named"), [
    ("EVIDENCE_EVIDENCE__QUOTE_GAP", "1.5", "quote_gap"),
    ("EVIDENCE_ANSWER__MAX_PARTS", "zero", "max_parts"),
    ("EVIDENCE_RESEARCH__NO_SUCH_SETTING", "1", "no_such_setting"),
], ids=["out-of-range", "not-a-number", "unknown-name"])
def test_a_bad_group_value_is_refused_by_name(monkeypatch: pytest.MonkeyPatch, variable: str, value: str,
                                             named: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=named):
        load_settings()


def test_a_record_carries_the_groups_and_a_report_names_them_dotted() -> None:
    from engine.report.view import flat_settings, method_view
    from engine.trail.record import public_settings

    recorded = public_settings(Settings())
    assert recorded["evidence"]["quote_gap"] == 0.3 and recorded["answer"]["max_parts"] == 4
    shown = dict(method_view({"settings": recorded})["other_settings"])
    assert shown["evidence.quote_gap"] == 0.3 and shown["research.cosine_floor"] == 0.25
    assert not any(isinstance(v, dict) for v in shown.values())
    assert flat_settings({"b": 1, "a": {"y": 2, "x": 3}}) == [("a.x", 3), ("a.y", 2), ("b", 1)]


def test_every_group_setting_is_documented() -> None:
    from tests.conftest import ROOT

    text = (ROOT / "docs" / "configuration.md").read_text()
    assert [f"{g}.{n}" for g, n in FIELDS if f"`{g}.{n}`" not in text] == []


def test_no_local_path_or_secret_enters_a_record_or_the_hash(tmp_path) -> None:
    """One list (LOCAL_SETTINGS) keeps this machine's paths and the secrets out of every hashed record."""
    from engine.trail.record import public_settings

    plain = Settings(home=tmp_path / "a", database_url=None)
    local = Settings(home=tmp_path / "b", cache_dir=tmp_path / "cache", trail_key_file=tmp_path / "k.pem",
                     database_url="postgresql://u:pw@db.example/x", llm_api_key="sk-secret", actor="someone")
    recorded = json.dumps(public_settings(local))
    assert str(tmp_path) not in recorded and "sk-secret" not in recorded and "pw@" not in recorded
    assert public_settings(local) == public_settings(plain) and local.fingerprint() == plain.fingerprint()
