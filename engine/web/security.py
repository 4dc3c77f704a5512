"""Security of the reviewer's desk: password hashing, secrets, roles, CSRF, login rate limit, denial log.

* Passwords: Argon2id (argon2-cffi's defaults, RFC 9106 low-memory profile); a hash made with older
  parameters is replaced at the next good login.
* Bearer tokens and session ids: 32 random bytes (`secrets.token_urlsafe`), stored as SHA-256 only;
  a guess has to hit 256 bits, so a slow hash would add nothing.
* Roles are ranked: viewer (reads) < analyst (also asks) < reviewer (also signs off) < admin (also
  manages users). Four-eyes is separate: nobody signs off an audit they asked (`engine.web.signoff`).
* CSRF: a random token per session, sent back in a hidden form field (or the X-CSRF-Token header);
  compared in constant time. Cookies are HttpOnly and SameSite=Strict as well.
* Every denial (401, 403, 429) is logged on the `engine.web.security` logger with who, what and why.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections import deque
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from engine.web.store import ROLES

log = logging.getLogger(__name__)

RANK = {role: i for i, role in enumerate(ROLES)}
_hasher = PasswordHasher()
# Verifying against this keeps a login for an unknown user as slow as one with a wrong password.


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    """What an unknown user's password is checked against (the same work as a known one's); made on first use,
    not at import (a hash takes about 0.2 s, which every `evidence` command would pay)."""
    return _hasher.hash("not a password of anyone")


MIN_PASSWORD_CHARS = 12


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def check_password(stored_hash: str | None, password: str) -> tuple[bool, str | None]:
    """(matches, a new hash when the stored one should be upgraded). Unknown users pass `None`."""
    try:
        _hasher.verify(stored_hash or _dummy_hash(), password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False, None
    if stored_hash is None:
        return False, None
    return True, (_hasher.hash(password) if _hasher.check_needs_rehash(stored_hash) else None)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))


def allows(role: str, needed: str) -> bool:
    """True when `role` ranks at least `needed`."""
    return RANK.get(role, -1) >= RANK[needed]


def deny(status: int, *, user: str | None, role: str | None, method: str, path: str, client: str, reason: str) -> None:
    """Log one denial (every 401, 403 and 429 goes through here)."""
    log.warning("denied %s %s %s user=%s role=%s client=%s: %s", status, method, path, user or "-", role or "-",
                client, reason)


class LoginLimiter:
    """Failed logins within `window_s` seconds, counted before the password is checked (so parallel guesses
    cannot all pass the check while the slow hash runs) under three keys:

    * one account from one address: `attempts` failures, then that pair waits;
    * one account from anywhere: `attempts * spread` (a guesser with many addresses);
    * one address for any account: `attempts * spread` (password spraying).

    A few typos lock out neither other users behind the same address nor the same user elsewhere. Each
    `begin` reserves a failure; `succeeded` gives it back and forgets the pair's failures. Kept in memory:
    one `evidence serve` process; a restart forgets (the Argon2 cost still bounds guessing).
    """

    def __init__(self, attempts: int = 5, window_s: float = 300.0, spread: int = 4) -> None:
        self.attempts = attempts
        self.window_s = window_s
        self.spread = spread
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _keys(self, user: str, client: str) -> dict[str, int]:
        name = user.lower()
        return {f"p:{name}\x00{client}": self.attempts, f"u:{name}": self.attempts * self.spread,
                f"c:{client}": self.attempts * self.spread}

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and now - times[0] > self.window_s:
            times.popleft()
        return times

    def begin(self, user: str, client: str) -> int:
        """Seconds to wait before (user, client) may try again, or 0 after reserving this attempt as a failure."""
        now = time.monotonic()
        with self._lock:
            keys = self._keys(user, client)
            recent = {k: self._recent(k, now) for k in keys}
            waits = [self.window_s - (now - t[0]) for k, t in recent.items() if len(t) >= keys[k]]
            if waits:
                return int(max(waits) + 1)
            for t in recent.values():
                t.append(now)
        return 0

    def succeeded(self, user: str, client: str) -> None:
        """The reserved attempt was a good login: forget the pair's failures and give back its reservation."""
        with self._lock:
            keys = list(self._keys(user, client))
            self._failures.pop(keys[0], None)
            for k in keys[1:]:
                if self._failures.get(k):
                    self._failures[k].pop()
