"""The question's language: detected, compared with the corpus's, said plainly (rules backend), written
in by the llm backend (quotes stay verbatim), and recorded in the audit."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agents.compose import ComposedAnswer, Statement
from agents.deps import Deps
from agents.graph import build_evidence_graph
from agents.research import run_research
from agents.review import review_answer
from engine.ingest.language import UNDETERMINED, answer_language, corpus_language, detect, language_note
from engine.trail.record import build_record
from tests.agents.test_evidence_llm import EVIDENCE, FIVE, NO_FINDINGS, SIX, SOUND_EXTRACT, SOUND_VERIFY
from tests.fakes import ScriptedChatModel, tool_reply

GERMAN = "Wie lange müssen Transaktionsaufzeichnungen aufbewahrt werden?"


@pytest.mark.parametrize(("text", "code"), [
    (GERMAN, "de"),
    ("Combien de temps faut-il conserver les registres des transactions ?", "fr"),
    ("¿Cuánto tiempo deben conservarse los registros de transacciones?", "es"),
    ("How long must transaction records be kept?", "en"),
    ("Who may act as a trustee?", "en"),
], ids=["de", "fr", "es", "en", "en-short"])
def test_detect(text: str, code: str) -> None:
    assert detect(text).language == code


@pytest.mark.parametrize("text", ["4.2?", "", "Retention?"], ids=["figures", "empty", "one-word"])
def test_too_little_text_is_undetermined_not_guessed(text: str) -> None:
    assert detect(text).language in (UNDETERMINED, "en")
    assert language_note(detect(text).language, "en") is None


SAMPLES = [GERMAN, "How long must transaction records be kept?", "Combien de temps faut-il conserver les registres ?",
           "Quanto tempo devono essere conservati i registri delle operazioni?", "4.2?"]


def test_unpacked_language_model_gives_the_packed_models_answers(tmp_path) -> None:
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    from engine.ingest.language import _unpacked_identifier

    packed = MODEL_DIR / MODEL_FILE
    first = _unpacked_identifier(LanguageIdentifier, packed, tmp_path / "langid")
    unpacked = list((tmp_path / "langid").iterdir())
    again = _unpacked_identifier(LanguageIdentifier, packed, tmp_path / "langid")
    assert len(unpacked) == 1 and (unpacked[0] / "ptc.npy").exists()  # one folder, named by the model's hash
    reference = LanguageIdentifier.from_model_file(packed, norm_probs=True)
    for text in SAMPLES:
        assert first.classify(text) == again.classify(text) == reference.classify(text)


def test_unusable_cache_falls_back_to_the_packed_model(tmp_path) -> None:
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    from engine.ingest.language import _unpacked_identifier

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    identifier = _unpacked_identifier(LanguageIdentifier, MODEL_DIR / MODEL_FILE, blocker / "langid")
    assert identifier.classify(GERMAN)[0] == "de"


def test_corpus_language_uses_stored_languages_and_detects_the_rest() -> None:
    docs = [("en", ""), (None, "A firm must retain records for six years."), ("de", "")]
    assert corpus_language(docs) == "en"
    assert corpus_language([]) == UNDETERMINED


def test_note_only_when_languages_differ() -> None:
    assert "German" in language_note("de", "en") and "English" in language_note("de", "en")
    assert language_note("en", "en") is None


def test_answer_language_falls_back_to_corpus_then_english() -> None:
    assert answer_language({"question": "de", "corpus": "en"}) == "de"
    assert answer_language({"question": UNDETERMINED, "corpus": "fr"}) == "fr"
    assert answer_language(None) == "en"


def test_rules_backend_says_so_and_still_searches(corpus_conn, corpus_settings, embedder) -> None:
    deps = Deps.build(corpus_conn, corpus_settings, embedder=embedder, backend="rules")
    result = run_research(GERMAN, deps)
    assert result.language["question"] == "de" and result.language["corpus"] == "en"
    assert "German" in result.language["note"] and "searched" in result.language["note"]
    assert result.steps and not result.rejected
    record = build_record(corpus_conn, corpus_settings, result.model_dump(mode="json"), actor="t",
                          asked_at=datetime.now(UTC), models={}, skills={})
    assert record.language == result.language


def test_same_language_has_no_note(corpus_conn, corpus_settings, embedder) -> None:
    deps = Deps.build(corpus_conn, corpus_settings, embedder=embedder, backend="rules")
    result = run_research("How long must transaction records be kept?", deps)
    assert result.language["question"] == result.language["corpus"] == "en"
    assert result.language["note"] is None


class _Recording(ScriptedChatModel):
    """Scripted replies; every prompt it was sent is kept in `PROMPTS`."""

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any):
        PROMPTS.append(" ".join(str(m.content) for m in messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


PROMPTS: list[str] = []
TRANSLATED = {"question": "How long must transaction records be kept?"}
GERMAN_STATEMENT = {"text": f'Die Retention Regulation (Abschnitt 4.2) bestimmt: "{SIX}" [REQ-S001], während die '
                            f'Records Policy besagt: "{FIVE}" [REQ-P001].', "requirement_ids": ["REQ-S001", "REQ-P001"]}


def _run_llm_stage(corpus_conn, corpus_settings, embedder, compose_reply: dict[str, Any],
                   translated: dict[str, Any] = TRANSLATED) -> dict[str, Any]:
    PROMPTS.clear()
    model = _Recording(messages=iter([tool_reply(r) for r in (translated, SOUND_EXTRACT, SOUND_VERIFY, compose_reply,
                                                              NO_FINDINGS, compose_reply)]))
    deps = Deps.build(corpus_conn, corpus_settings, embedder=embedder, backend="llm", chat_model=model)
    state = build_evidence_graph().invoke(
        {"stem": GERMAN, "options": [], "evidence": EVIDENCE, "metrics": [], "fallbacks": [],
         "language": {"question": "de", "confidence": 0.99, "corpus": "en", "note": "..."}},
        {"configurable": {"deps": deps}})
    return state["evidence_result"]


def test_llm_backend_writes_in_the_questions_language_quotes_verbatim(corpus_conn, corpus_settings,
                                                                      embedder) -> None:
    result = _run_llm_stage(corpus_conn, corpus_settings, embedder, {"statements": [GERMAN_STATEMENT]})
    assert "Documents' language: English" in PROMPTS[0] and GERMAN in PROMPTS[0]  # the question put into English
    assert [p["question"] for p in result["parts"]] == [TRANSLATED["question"]]  # what passages were judged against
    assert result["question"] == GERMAN
    compose_prompt = next(p for p in PROMPTS if "Verified requirements" in p)
    assert "in German" in compose_prompt
    assert result["review"]["passed"] and result["review"]["composer"] == "llm"
    assert [s["text"] for s in result["statements"]] == [GERMAN_STATEMENT["text"]]


def test_a_rendering_not_in_the_corpus_language_is_refused(corpus_conn, corpus_settings, embedder) -> None:
    untranslated = {"question": "Wie lange müssen die Aufzeichnungen über Transaktionen aufbewahrt werden?"}
    result = _run_llm_stage(corpus_conn, corpus_settings, embedder, {"statements": [GERMAN_STATEMENT]}, untranslated)
    assert "translate: reply rejected by code checks" in result["fallbacks"]
    assert [p["question"] for p in result["parts"]] == [GERMAN]  # judged as asked, recorded


def test_llm_german_words_beyond_framing_fail_review() -> None:
    from agents.extract import Modality, Requirement

    req = Requirement(requirement_id="REQ-S001", source_type="regulation", document_id="doc_reg", document_version=1,
                      document_title="Retention Regulation", section_path="4.2", chunk_id="chk_reg", char_start=0,
                      char_end=len(SIX), exact_quote=SIX, modality=Modality.OBLIGATION, extraction_confidence="high",
                      confidence_reason="test", refers_elsewhere=False)
    framed = ComposedAnswer(statements=[Statement(text=f'Die Verordnung bestimmt: "{SIX}" [REQ-S001]',
                                                  requirement_ids=["REQ-S001"])], composer="llm")
    negated = ComposedAnswer(statements=[Statement(
        text=f'Die Verordnung gilt nicht für kleine Firmen: "{SIX}" [REQ-S001]', requirement_ids=["REQ-S001"])],
        composer="llm")
    assert review_answer(framed, [req], "de").passed
    assert not review_answer(negated, [req], "de").passed
    assert not review_answer(framed, [req], "en").passed  # German framing is only accepted for a German answer


def test_cli_prints_the_language_note(corpus_settings, monkeypatch) -> None:
    from typer.testing import CliRunner

    from engine.cli.main import app

    monkeypatch.setenv("DATABASE_URL", corpus_settings.database_url)
    monkeypatch.setenv("EVIDENCE_HOME", str(corpus_settings.home))
    result = CliRunner().invoke(app, ["ask", GERMAN])
    assert result.exit_code == 0, result.output
    assert "language: The question is in German, the corpus in English." in result.stdout
