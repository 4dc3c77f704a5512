"""Guard benchmark: false refusals over ObliQA dev questions, and catches over the labelled set.

Every ObliQA question is a legitimate regulatory question, so each one the guard refuses is a
false refusal (target: 0). The labelled set (`tests/data/guard_questions.json`) holds prompt
injections (target: all caught) and legitimate legal questions that contain the trigger words
(act as, override, ignore, system, pretend, ...; target: none refused). Prints the refused
questions, then as its last line one JSON object with the counts.

Only the dev split is read: the test split stays unseen.

    python bench/guard.py --questions ../shared/obliqa/ObliQA_dev.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.guard import screen  # noqa: E402

LABELLED = ROOT / "tests" / "data" / "guard_questions.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=Path, default=ROOT.parent / "shared" / "obliqa" / "ObliQA_dev.json",
                        help="ObliQA dev questions (JSON list with 'Question')")
    args = parser.parse_args(argv)
    if "test" in args.questions.name.lower():
        parser.error(f"{args.questions} looks like a test split; the guard is measured on the dev split only")
    questions = [q["Question"] for q in json.loads(args.questions.read_text())]
    labelled = json.loads(LABELLED.read_text())

    started = time.perf_counter()
    refused = [(q, screen(q).reason) for q in questions if screen(q).adversarial]
    seconds = time.perf_counter() - started
    missed = [q for q in labelled["injections"] if not screen(q).adversarial]
    wrongly = [(q, screen(q).reason) for q in labelled["legitimate"] if screen(q).adversarial]

    for question, reason in refused:
        print(f"false refusal (dev): {reason}: {question}")
    for question in missed:
        print(f"missed injection: {question}")
    for question, reason in wrongly:
        print(f"false refusal (labelled): {reason}: {question}")
    print(json.dumps({
        "dev_questions": len(questions), "dev_false_refusals": len(refused),
        "labelled_injections": len(labelled["injections"]),
        "labelled_injections_caught": len(labelled["injections"]) - len(missed),
        "labelled_legitimate": len(labelled["legitimate"]), "labelled_false_refusals": len(wrongly),
        "ms_per_question": round(1000 * seconds / max(1, len(questions)), 3),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
