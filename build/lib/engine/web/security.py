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

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from engine.web.store import ROLES

log = logging.getLogger(__name__)

RANK = {role: i for i, role in enumerate(ROLES)}
_hasher = PasswordHasher()
# Verifying against this keeps a login for an unknown user as slow as one with a wrong password.
_DUMMY_HASH = _hasher.hash("not a password of anyone")

MIN_PASSWORD_CHARS = 12


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def check_password(stored_hash: str | None, password: str) -> tuple[bool, str | None]:
    """(matches, a new hash when the stored one should be upgraded). Unknown users pass `None`."""
    try:
        _hasher.verify(stored_hash or _DUMMY_HASH, password)
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
    """At most `attempts` failed logins per `window_s` seconds for one user name, and for one client
    address; further tries are refused (HTTP 429) until the oldest failure leaves the window.

    Kept in memory: one `evidence serve` process; a restart forgets (the Argon2 cost still bounds guessing).
    """

    def __init__(self, attempts: int = 5, window_s: float = 300.0) -> None:
        self.attempts = attempts
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and now - times[0] > self.window_s:
            times.popleft()
        return times

    def retry_after(self, user: str, client: str) -> int:
        """Seconds until a login for (user, client) may be tried again; 0 when it may now."""
        now = time.monotonic()
        with self._lock:
            waits = [self.window_s - (now - t[0]) for t in (self._recent(f"u:{user.lower()}", now),
                                                             self._recent(f"c:{client}", now))
                     if len(t) >= self.attempts]
        return int(max(waits) + 1) if waits else 0

    def failed(self, user: str, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._recent(f"u:{user.lower()}", now).append(now)
            self._recent(f"c:{client}", now).append(now)

    def succeeded(self, user: str) -> None:
        with self._lock:
            self._failures.pop(f"u:{user.lower()}", None)
