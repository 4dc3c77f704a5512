"""Trail scale benchmark (issue 34, item 5): appends per second and checkpoint time at 10K, 100K and 1M audits.

    python bench/trail_scale.py [--sizes 10000,100000,1000000] [--repeat 7] [--seconds 8] [--processes 1,4]

Uses its own embedded server (`bench/.cache/trail-scale`), one database per size, kept between runs. A
trail is made of synthetic but valid records: each row's canonical text is `engine.trail.store.envelope`
of a small answer record, its hash the SHA-256 of that text, chained by prev_hash from the genesis hash;
rows are loaded with COPY with the triggers off (so neither the chain check nor the tree trigger runs per
row), then the stored tree is built set-based by `trail_fill_nodes()` (sql/015, the same function the
migration runs on an existing trail; its time is printed as `fill_s`). A trail that signs after every append
holds as many checkpoints as audits, so one stand-in checkpoint row per audit is loaded too (the older
'json-v1' format, unsigned: signing reads only the newest signed note and looks rows up by index, and this
keeps any scan over the checkpoints in the figures).

Measured per size:
* `checkpoint_ms`: `create_checkpoint` (previous checkpoints verified, consistency proof from the previous
  one, root, Ed25519 signature, row and local-log entry), p50 and max of `--repeat`, each after one append;
* `reference_root_ms`: what a checkpoint cost before the stored tree: every record hash read and the RFC 6962
  root recomputed (`tree.root(tree.leaves(store.record_hashes(conn)))`), p50 of up to 3;
* `appends_per_s`: `store.append` of one record by 1 and 4 processes at once for `--seconds`: direct; with a
  checkpoint after each append (`_checkpointed`: as `ask` and now batches do, signed after the append's
  commit, outside the lock); and with the checkpoint signed inside the append's transaction (`_in_lock`: as
  batches did before, the append lock held while signing).

The last line is one JSON object with every figure, the load average before and after, and the CPU count.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.trail import signing  # noqa: E402
from engine.trail import store as audit_trail  # noqa: E402
from engine.trail import tree as trail_tree  # noqa: E402
from engine.trail.canonical import GENESIS_HASH, normalize  # noqa: E402
from engine.trail.checkpoints import covering, create_checkpoint  # noqa: E402

COLUMNS = ("seq", "audit_id", "kind", "question", "actor", "created_at", "status", "canonical", "record",
           "prev_hash", "hash")
CHECKPOINT_COLUMNS = ("seq", "head_hash", "signed_at", "key_fingerprint", "payload", "signature", "format")


def record(seq: int, tag: str = "bench") -> dict[str, Any]:
    """A small answer record: enough for the trail's header columns and the canonical form."""
    return normalize({"schema": "evidence-audit/bench", "kind": "answer", "audit_id": f"AUD-{tag}-{seq:09d}",
                      "question": f"Synthetic question {seq}?", "actor": "bench",
                      "recorded_at": "2026-11-26T00:00:00.000000Z", "answer": {"status": "ANSWERED"}})


def _copy_text(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _rows(start: int, count: int, prev: str) -> tuple[str, str, str]:
    """COPY texts of audits start..start+count-1 chained from `prev` and of one stand-in checkpoint row each;
    the last hash."""
    audits, cps = io.StringIO(), io.StringIO()
    for seq in range(start, start + count):
        rec = record(seq)
        text = audit_trail.envelope(seq, prev, rec)
        digest = hashlib.sha256(text.encode()).hexdigest()
        fields = (str(seq), rec["audit_id"], "answer", rec["question"], "bench", rec["recorded_at"], "ANSWERED",
                  text, json.dumps(rec, separators=(",", ":")), prev, digest)
        audits.write("\t".join(_copy_text(f) for f in fields) + "\n")
        payload = f'{{"head_hash":"{digest}","seq":{seq}}}'
        cps.write(f"{seq}\t{digest}\t{rec['recorded_at']}\tbench\t{payload}\t"
                  f"{hashlib.sha512(digest.encode()).hexdigest()}\tjson-v1\n")
        prev = digest
    return audits.getvalue(), cps.getvalue(), prev


def build(url: str, size: int, chunk: int = 50_000) -> dict[str, float]:
    """Fill the database at `url` with `size` chained audits and their stored tree (resumes a partial load)."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        head = audit_trail.head(conn)
        seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
        while seq <= size:
            count = min(chunk, size - seq + 1)
            text, cps, last = _rows(seq, count, prev)
            with conn.transaction():
                conn.execute("SET LOCAL session_replication_role = replica")  # no per-row triggers
                with conn.cursor().copy(f"COPY audits ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                    copy.write(text)
                with conn.cursor().copy(f"COPY trail_checkpoints ({', '.join(CHECKPOINT_COLUMNS)}) FROM STDIN") as copy:
                    copy.write(cps)
            seq, prev = seq + count, last
            print(f"  loaded {seq - 1}/{size} audits ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        conn.execute("SELECT trail_fill_nodes()")
        fill_s = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE audits")
        conn.execute("VACUUM ANALYZE trail_nodes")
        conn.execute("VACUUM ANALYZE trail_checkpoints")
    return {"load_s": round(load_s, 1), "fill_s": round(fill_s, 1)}


def database(base: str, settings: Settings, size: int) -> tuple[str, dict[str, float]]:
    """The migrated database of one size, built when missing or short."""
    name = f"trail_{size}"
    with psycopg.connect(base, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    url = base.replace("/postgres?", f"/{name}?", 1)
    with dbmod.connection(settings.model_copy(update={"database_url": url})):
        pass  # applies the migrations
    with psycopg.connect(url, autocommit=True) as conn:
        head = audit_trail.head(conn)
    built = build(url, size) if head is None or head[0] < size else {}
    return url, built


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def checkpoints(settings: Settings, repeat: int) -> dict[str, Any]:
    """create_checkpoint after one append, `repeat` times; the first (ever, or after a long gap) apart."""
    with dbmod.connection(settings) as conn:
        started = time.perf_counter()
        create_checkpoint(conn, settings)
        first_ms = (time.perf_counter() - started) * 1000
        times = []
        for _ in range(repeat):
            audit_trail.append(conn, record(time.time_ns(), "cp"))
            started = time.perf_counter()
            create_checkpoint(conn, settings)
            times.append((time.perf_counter() - started) * 1000)
    return {"checkpoint_ms_p50": _p50(times), "checkpoint_ms_max": round(max(times), 2),
            "first_checkpoint_ms": round(first_ms, 2)}


def reference_root(settings: Settings, repeat: int) -> float:
    """What every checkpoint did before: read every record hash, recompute the root."""
    times = []
    with dbmod.connection(settings) as conn:
        for _ in range(repeat):
            started = time.perf_counter()
            root = trail_tree.root(trail_tree.leaves(audit_trail.record_hashes(conn)))
            times.append((time.perf_counter() - started) * 1000)
        size = audit_trail.head(conn)[0]  # type: ignore[index]
        assert root == audit_trail.stored_tree(conn, size).root(), "stored tree and records disagree"
    return _p50(times)


MODES = ("direct", "checkpointed", "in_lock")


def _append(conn: psycopg.Connection, settings: Settings, mode: str, slot: int) -> None:
    rec = record(time.time_ns(), f"w{slot}")
    if mode == "in_lock":  # as batches did before: the checkpoint inside the append's transaction, under its lock
        with conn.transaction():
            covering(conn, settings, audit_trail.append(conn, rec).seq)
        return
    appended = audit_trail.append(conn, rec)
    if mode == "checkpointed":  # what every append does now (`checkpoints.after_append`): after the commit
        covering(conn, settings, appended.seq)


def _worker(settings: Settings, seconds: float, mode: str, barrier: Any, counts: Any, slot: int) -> None:
    with dbmod.connection(settings) as conn:
        barrier.wait()
        done, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            _append(conn, settings, mode, slot)
            done += 1
        counts[slot] = done


def appends(settings: Settings, processes: int, seconds: float, mode: str) -> float:
    """Appends per second of `processes` processes appending at once for `seconds`."""
    ctx = multiprocessing.get_context("spawn")
    barrier, counts = ctx.Barrier(processes + 1), ctx.Array("i", processes)
    workers = [ctx.Process(target=_worker, args=(settings, seconds, mode, barrier, counts, i))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    barrier.wait()
    for worker in workers:
        worker.join()
    if any(w.exitcode for w in workers):
        raise SystemExit(f"an append worker failed: exit codes {[w.exitcode for w in workers]}")
    return round(sum(counts[:]) / seconds, 1)


def measure(settings: Settings, size: int, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"audits": size}
    out.update(checkpoints(settings, args.repeat))
    out["reference_root_ms_p50"] = reference_root(settings, 1 if size >= 1_000_000 else 3)
    for processes in args.processes:
        for mode in MODES:
            key = f"appends_per_s_{processes}p" + ("" if mode == "direct" else f"_{mode}")
            out[key] = appends(settings, processes, args.seconds, mode)
    print(f"  {json.dumps(out)}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=ROOT / "bench" / ".cache" / "trail-scale")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=7, help="checkpoints timed per size (p50 reported)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of appending per measurement")
    parser.add_argument("--processes", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4])
    parser.add_argument("--no-appends", action="store_true", help="checkpoint figures only")
    args = parser.parse_args(argv)
    if args.no_appends:
        args.processes = []
    args.home.mkdir(parents=True, exist_ok=True)
    base_settings = Settings(home=args.home, database_url=None, checkpoint_on_append=False)
    started_here = not embedded_db.status(base_settings)["running"]
    load_before = os.getloadavg()
    results = []
    try:
        base = embedded_db.start(base_settings)
        for size in (int(s) for s in args.sizes.split(",")):
            print(f"trail of {size} audits", file=sys.stderr)
            url, built = database(base, base_settings, size)
            home = args.home / f"home-{size}"  # its own key and local log, like a deployment of that trail
            settings = base_settings.model_copy(update={"database_url": url, "home": home})
            signing.load_or_create(settings.signing_key_file, settings.trail_passphrase)  # before the stand-ins
            results.append({**measure(settings, size, args), **built})
    finally:
        if started_here:
            embedded_db.stop(base_settings)
    by_size = {r["audits"]: r["checkpoint_ms_p50"] for r in results}
    ratio = round(by_size[max(by_size)] / by_size[min(by_size)], 2) if len(by_size) > 1 else None
    print(json.dumps({"sizes": results, "checkpoint_ratio_largest_to_smallest": ratio,
                      "load_before": [round(x, 2) for x in load_before],
                      "load_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
