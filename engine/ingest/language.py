"""Language identification of questions and documents (py3langid, whose model ships in the package).

Short texts are hard to place: a detection below `MIN_CONFIDENCE` is reported as undetermined
(`und`, the ISO 639 code for it) rather than guessed, so a terse English question is never said
to be in another language.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from engine.config import load_settings
from engine.text import normalize_ws

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


# py3langid ships its model LZMA-compressed: unpacking it takes 0.7-1 s, a third of a cold `ask`. The
# arrays are unpacked once into the cache directory (keyed by the packed file's hash) and memory-mapped.
_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    try:

        cache = load_settings().cache_root / "langid"
    except Exception:  # noqa: BLE001 - an unusable setting must not stop detection; it only costs time
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _unpacked_identifier(LanguageIdentifier, MODEL_DIR / MODEL_FILE, cache)


def _unpacked_identifier(cls: Any, packed: Path, cache: Path) -> Any:
    """The identifier from memory-mapped arrays under `cache`, unpacking them first when missing.
    Falls back to reading the packed model when the cache cannot be read or written."""
    from py3langid.modelio import _to_array

    digest = hashlib.sha256(packed.read_bytes()).hexdigest()[:16]
    folder = cache / digest
    try:
        if not (folder / "out_feat.npy").exists():
            _unpack(packed, folder)
        a = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        return cls(a["ptc"], np.asarray(a["pc"]), a["classes"].tolist(), _to_array(a["nextmove"]),
                   a["out_feat"].tolist(), norm_probs=True, tk_row=_to_array(a["nextmove_row"]))
    except (OSError, ValueError, KeyError):
        return cls.from_model_file(packed, norm_probs=True)


def _unpack(packed: Path, folder: Path) -> None:
    """Write the model's arrays as .npy files; the folder appears whole (renamed into place) or not at all."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=folder.parent))
    try:
        with lzma.open(packed) as src, np.load(io.BytesIO(src.read()), allow_pickle=False) as data:
            for name in _ARRAYS:
                np.save(work / f"{name}.npy", data[name], allow_pickle=False)
        try:
            work.rename(folder)
        except OSError:  # another process unpacked it first
            if not (folder / "out_feat.npy").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def detect(text: str) -> Detection:
    """The language of `text` (its first SAMPLE_CHARS characters); `und` below MIN_CONFIDENCE."""
    sample = normalize_ws(text[:SAMPLE_CHARS])
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
