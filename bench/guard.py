"""Guard benchmark: prompt injections caught and legitimate questions refused, set by set.

Injection sets (target: all caught):
* `heldout-1`, `-2`, `-3`: bench/guard_heldout.yaml, paraphrases by intent written and frozen before
  they were run through the guard (not derived from its patterns). The intent rules were developed on
  heldout-1's misses, then on heldout-2's, so both are development sets since; heldout-3 was written
  before that second round and never tuned on: its figure is the honest one;
* `labelled`: tests/data/guard_questions.json, the set the patterns were developed on (not held out);
* `jcm`: jailbreak-corpus-mini-py 0.1.0 (MIT), when its wheel is given with --wheel;
* `spikee-*`: spikee 0.9.2 (Apache-2.0) seeds-sysmsg-extraction-2025-04, when its wheel is given: the
  instructions alone (English, and Zulu/Albanian/Irish/Scottish Gaelic translations), and each jailbreak
  template wrapped around its first instruction.

Legitimate sets (target: none refused): ObliQA dev questions (every one a regulatory question; only
the dev split is read), the questions of every bench/corpora/*/questions.yaml, every audits/*.yaml
checklist, the held-out and labelled legitimate look-alikes, and spikee's investment-advice
false-positive inputs. Prints what was missed or refused, then as its last line one JSON object.

    pip download spikee==0.9.2 jailbreak-corpus-mini-py==0.1.0 --no-deps -d bench/.cache/wheels
    python bench/guard.py --wheel bench/.cache/wheels/*.whl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.guard import screen  # noqa: E402

LABELLED = ROOT / "tests" / "data" / "guard_questions.json"
HELDOUT = ROOT / "bench" / "guard_heldout.yaml"
SPIKEE = "spikee/data/workspace/datasets/"
NON_ENGLISH_FROM = 11  # spikee's sysmsg instructions: 11 in English, then the translations


def _jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def wheel_sets(path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(injection sets, legitimate sets) read from a downloaded wheel, without installing it."""
    with zipfile.ZipFile(path) as wheel:
        names = set(wheel.namelist())
        if "jailbreak_corpus_mini/corpus.json" in names:
            items = json.loads(wheel.read("jailbreak_corpus_mini/corpus.json"))
            return {"jcm": [i["prompt"] for i in items]}, {}
        base = SPIKEE + "seeds-sysmsg-extraction-2025-04/"
        if base + "instructions.jsonl" in names:
            instructions = [i["instruction"] for i in _jsonl(wheel.read(base + "instructions.jsonl").decode())]
            alone = [i[:1].upper() + i[1:] for i in dict.fromkeys(instructions)]
            templates = [j["text"] for j in _jsonl(wheel.read(base + "jailbreaks.jsonl").decode())
                         if j.get("jailbreak_type") != "no-jailbreak"]
            advice = SPIKEE + "seeds-investment-advice-fp/standalone_user_inputs.jsonl"
            return ({"spikee-extract-english": alone[:NON_ENGLISH_FROM],
                     "spikee-extract-translated": alone[NON_ENGLISH_FROM:],
                     "spikee-jailbreak-templates": [t.replace("<INSTRUCTION>", instructions[0].rstrip("."))
                                                    for t in templates]},
                    {"spikee-investment-fp": [i["text"] for i in _jsonl(wheel.read(advice).decode())]})
    raise SystemExit(f"{path}: neither jailbreak-corpus-mini-py nor spikee")


def legitimate_sets(obliqa: Path) -> dict[str, list[str]]:
    sets = {"obliqa-dev": [q["Question"] for q in json.loads(obliqa.read_text())]}
    for path in sorted((ROOT / "bench" / "corpora").glob("*/questions.yaml")):
        sets[f"corpus-{path.parent.name}"] = [q["question"] for q in yaml.safe_load(path.read_text())["questions"]]
    sets["audits"] = [q["text"] for path in sorted((ROOT / "audits").glob("*.yaml"))
                      for q in yaml.safe_load(path.read_text())["questions"]]
    heldout = yaml.safe_load(HELDOUT.read_text())
    for number, key in ((1, "legitimate"), (2, "legitimate_2"), (3, "legitimate_3")):
        sets[f"heldout-{number}-legitimate"] = heldout[key]
    sets["labelled-legitimate"] = json.loads(LABELLED.read_text())["legitimate"]
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "obliqa" / "ObliQA_dev.json",
                        help="ObliQA dev questions (JSON list with 'Question')")
    parser.add_argument("--wheel", type=Path, action="append", default=[],
                        help="a downloaded wheel of jailbreak-corpus-mini-py or spikee (repeatable)")
    args = parser.parse_args(argv)
    if "test" in args.questions.name.lower():
        parser.error(f"{args.questions} looks like a test split; the guard is measured on the dev split only")
    heldout = yaml.safe_load(HELDOUT.read_text())
    attacks = {"heldout-1": heldout["injections"], "heldout-2": heldout["injections_2"],
               "heldout-3": heldout["injections_3"],
               "labelled": json.loads(LABELLED.read_text())["injections"]}
    legitimate = legitimate_sets(args.questions)
    for wheel in args.wheel:
        more_attacks, more_legitimate = wheel_sets(wheel)
        attacks.update(more_attacks)
        legitimate.update(more_legitimate)

    started, screened = time.perf_counter(), 0
    figures: dict[str, Any] = {"injections": {}, "legitimate": {}}
    for name, texts in attacks.items():
        missed = [t for t in texts if not screen(t).adversarial]
        screened += len(texts)
        for text in missed:
            print(f"missed ({name}): {text!r}")
        figures["injections"][name] = {"n": len(texts), "caught": len(texts) - len(missed)}
    for name, texts in legitimate.items():
        refused = [(t, verdict.reason) for t in texts if (verdict := screen(t)).adversarial]
        screened += len(texts)
        for text, reason in refused:
            print(f"false refusal ({name}): {reason}: {text!r}")
        figures["legitimate"][name] = {"n": len(texts), "refused": len(refused)}
    figures["ms_per_question"] = round(1000 * (time.perf_counter() - started) / max(1, screened), 3)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
