"""Check questions.yaml against the workbook under docs/.

For every gold: the workbook must have at least one row, on any sheet, whose MSTG-ID cell (the cell under
the "MSTG-ID" header) equals the gold `section` exactly, and the gold `text` (whitespace-normalised) must
occur in that row's requirement cell (the cell under "Detailed Verification Requirement" or "Resiliency
Against Reverse Engineering Requirements"). Also checks 6-40 words, unique ids, type counts, and `part`
on two-part golds.

Usage: python check_gold.py        (needs openpyxl and PyYAML)
"""
import collections
import pathlib
import re

import openpyxl
import yaml

HERE = pathlib.Path(__file__).resolve().parent
REQ_HEADERS = {"Detailed Verification Requirement", "Resiliency Against Reverse Engineering Requirements"}


def norm(s):
    return re.sub(r"\s+", " ", str(s)).strip()


def load_rows(path):
    """{mstg_id: [(sheet, row, requirement_text), ...]} from every sheet with an MSTG-ID column."""
    rows = collections.defaultdict(list)
    wb = openpyxl.load_workbook(path)  # formulas kept as written; only literal cells are used
    for ws in wb.worksheets:
        id_col = req_col = None
        for row in ws.iter_rows():
            vals = {c.column: c.value for c in row}
            if id_col is None:
                for col, v in vals.items():
                    if v == "MSTG-ID":
                        id_col = col
                    elif isinstance(v, str) and v.strip() in REQ_HEADERS:
                        req_col = col
                continue
            ident, req = vals.get(id_col), vals.get(req_col)
            if isinstance(ident, str) and ident.strip() and isinstance(req, str):
                rows[ident].append((ws.title, row[0].row, req))
    return rows


def main():
    q = yaml.safe_load((HERE / "questions.yaml").read_text(encoding="utf-8"))
    docs = {d["file"]: load_rows(HERE / "docs" / d["file"]) for d in q["documents"]}
    for f, rows in docs.items():
        n = sum(len(v) for v in rows.values())
        print(f"{f}: {n} requirement rows, {len(rows)} distinct MSTG-IDs")
    types = collections.Counter()
    ids = collections.Counter()
    golds = bad = 0
    for item in q["questions"]:
        ids[item["id"]] += 1
        types[item["type"]] += 1
        if item["type"] == "out-of-scope" and item["gold"]:
            bad += 1
            print("FAIL", item["id"], "out-of-scope with gold")
        if item["type"] != "out-of-scope" and not item["gold"]:
            bad += 1
            print("FAIL", item["id"], "no gold")
        parts = set()
        for g in item["gold"]:
            golds += 1
            text, sec = norm(g["text"]), g["section"]
            words = len(text.split())
            hits = [(s, r) for s, r, req in docs[g["doc"]].get(sec, []) if text in norm(req)]
            problems = []
            if not hits:
                problems.append("text not in the requirement cell of a row with this MSTG-ID")
            if not 6 <= words <= 40:
                problems.append(f"{words} words")
            if item["type"] == "two-part":
                parts.add(g.get("part"))
            elif "part" in g:
                problems.append("part on a non-two-part question")
            if problems:
                bad += 1
                print("FAIL", item["id"], ascii(sec), "; ".join(problems), "|", text[:80])
            else:
                where = ", ".join(f"{s}!row {r}" for s, r in hits)
                print("ok  ", item["id"], ascii(sec), f"{words}w", "->", where)
        if item["type"] == "two-part" and parts != {1, 2}:
            bad += 1
            print("FAIL", item["id"], "two-part without parts 1 and 2")
    dup = [k for k, v in ids.items() if v > 1]
    if dup:
        bad += 1
        print("FAIL duplicate ids", dup)
    print(f"questions: {sum(types.values())} {dict(types)}")
    print(f"golds: {golds}, failures: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
