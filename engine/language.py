"""Language identification of questions and documents (py3langid, whose model ships in the package).

Short texts are hard to place: a detection below `MIN_CONFIDENCE` is reported as undetermined
(`und`, the ISO 639 code for it) rather than guessed, so a terse English question is never said
to be in another language.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

UNDETERMINED = "und"
MIN_CONFIDENCE = 0.5
SAMPLE_CHARS = 20_000  # a document's language is read from its beginning

NAMES = {
    "ar": "Arabic", "bg": "Bulgarian", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "et": "Estonian", "fi": "Finnish", "fr": "French", "ga": "Irish",
    "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "mt": "Maltese", "nl": "Dutch",
    "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian", "zh": "Chinese",
    UNDETERMINED: "an undetermined language",
}


class Detection(BaseModel):
    """The language of a text, as an ISO 639-1 code (or `und`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    language: str = Field(description="ISO 639-1 code, or 'und' when the text is too short or unclear")
    confidence: float = Field(description="Normalized probability of the detected language (0-1)")

    @property
    def name(self) -> str:
        return language_name(self.language)


def language_name(code: str) -> str:
    """English name of a language code ('de' -> 'German'); the code itself when not listed."""
    return NAMES.get(code, code)


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect(text: str) -> Detection:
    """The language of `text` (its first SAMPLE_CHARS characters); `und` below MIN_CONFIDENCE."""
    sample = " ".join(text[:SAMPLE_CHARS].split())
    if not any(ch.isalpha() for ch in sample):
        return Detection(language=UNDETERMINED, confidence=0.0)
    code, probability = _identifier().classify(sample)
    confidence = round(float(probability), 4)
    return Detection(language=str(code) if confidence >= MIN_CONFIDENCE else UNDETERMINED, confidence=confidence)


def corpus_language(documents: list[tuple[str | None, str]]) -> str:
    """The language most current documents are in (`und` for an empty corpus).

    `documents` holds (language stored at ingest or None, the text's opening); a document without
    a stored language is detected from its opening.
    """
    counts: dict[str, int] = {}
    for stored, sample in documents:
        code = stored or detect(sample).language
        if code != UNDETERMINED:
            counts[code] = counts.get(code, 0) + 1
    return max(sorted(counts), key=lambda c: counts[c]) if counts else UNDETERMINED


def language_note(question: str, corpus: str) -> str | None:
    """A plain sentence when the question's language differs from the corpus's, else None."""
    if UNDETERMINED in (question, corpus) or question == corpus:
        return None
    return (f"The question is in {language_name(question)}, the corpus in {language_name(corpus)}. "
            f"It was searched all the same: word matching finds fewer passages across languages, and "
            f"quotes stay in {language_name(corpus)}, verbatim.")


def question_language(question: str, documents: list[tuple[str | None, str]]) -> dict[str, Any]:
    """What the audit records about languages: the question's, its confidence, the corpus's, a note."""
    found = detect(question)
    corpus = corpus_language(documents)
    return {"question": found.language, "confidence": found.confidence, "corpus": corpus,
            "note": language_note(found.language, corpus)}


def answer_language(info: dict[str, Any] | None) -> str:
    """The language an answer's own sentences are written in: the question's when it was detected,
    else the corpus's, else English."""
    info = info or {}
    for code in (info.get("question"), info.get("corpus")):
        if code and code != UNDETERMINED:
            return str(code)
    return "en"
