"""The reviewer's desk under open live-progress streams: how fast other pages answer while N server-sent
event streams are open, against the app as `evidence serve` runs it (uvicorn, one process).

Uses its own embedded database (`bench/.cache/web-streams`, reused): a viewer account and one batch
that never finishes, whose event stream each of the N connections follows (a stream polls the batch
every 2 s, shared by all streams of one batch). With the streams open, GET /audits, /documents and
/batches are timed `--requests` times each, one at a time. Prints per stream count the p50 and max
latency in milliseconds, and as its last line one JSON object.

    python bench/web_streams.py [--streams 0 100] [--requests 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import db as dbmod  # noqa: E402
from engine import embedded_db  # noqa: E402
from engine.batch import store as batch_store  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.web import security  # noqa: E402
from engine.web import store as web_store  # noqa: E402
from engine.web.app import create_app  # noqa: E402

HOME = ROOT / "bench" / ".cache" / "web-streams"
USER, PASSWORD = "bench-viewer", "bench-viewer-password"
BATCH = "B-bench-streams"


def prepare(settings: Settings) -> None:
    with dbmod.connection(settings) as conn:
        if web_store.get_user(conn, USER) is None:
            web_store.add_user(conn, USER, "viewer", security.hash_password(PASSWORD))
        if not conn.execute("SELECT 1 FROM batches WHERE batch_id = %s", (BATCH,)).fetchone():
            batch_store.create(conn, batch_id=BATCH, name="never finishes", path="bench.yaml", sha256="0" * 64,
                               definition={"checklist": {"name": "never finishes", "questions": [
                                   {"id": "q1", "text": "A question nobody answers?"}]}},
                               actor=USER, settings_hash="bench", items=[("q1", "run-bench-streams-1")])


def serve(settings: Settings, per_user: int) -> tuple[Any, str]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(settings, streams_per_user=per_user, streams_total=per_user)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def login(base: str) -> httpx.Client:
    http = httpx.Client(base_url=base, timeout=60)
    token = re.search(r'name="csrf_token" value="([^"]*)"', http.get("/login").text).group(1)  # type: ignore[union-attr]
    assert http.post("/login", data={"csrf_token": token, "name": USER, "password": PASSWORD}).status_code == 303
    return http


def open_stream(base: str, cookie: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.sendall(f"GET /batches/{BATCH}/events HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head[:200].decode(errors="replace"))
    return sock


def measure(http: httpx.Client, requests: int) -> list[float]:
    times = []
    for _ in range(requests):
        for path in ("/audits", "/documents", "/batches"):
            started = time.perf_counter()
            assert http.get(path).status_code == 200
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, nargs="+", default=[0, 100])
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    HOME.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(HOME / "run"))
    settings = Settings(home=HOME, database_url=None)
    settings = settings.model_copy(update={"database_url": embedded_db.start(settings)})
    prepare(settings)
    server, base = serve(settings, per_user=max(args.streams) + 1)
    results = {}
    try:
        http = login(base)
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        for n in args.streams:
            socks = [open_stream(base, cookie) for _ in range(n)]
            time.sleep(3)  # the streams' first polls have run
            times = measure(http, args.requests)
            for s in socks:
                s.close()
            results[str(n)] = {"p50_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1),
                               "requests": len(times)}
            print(f"{n:4d} open streams: page p50 {results[str(n)]['p50_ms']} ms, max {results[str(n)]['max_ms']} ms "
                  f"({len(times)} requests)")
            time.sleep(3)
    finally:
        server.should_exit = True
        embedded_db.stop(Settings(home=HOME, database_url=None))
    print(json.dumps({"load_average": os.getloadavg(), "streams": results}))


if __name__ == "__main__":
    main()
