"""Servers of a test's own, to stop and start again: a Redis and a PostgreSQL on free ports, in a folder of
their own, so that an outage reaches no other test (the suite's shared services stay up).

    redis = RedisServer(); redis.start(); redis.stop(); redis.start()     # same port, same data
    postgres = PostgresServer(); postgres.start(); postgres.restart()      # a crash and its recovery
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

START_TIMEOUT_S = 30


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


class RedisServer:
    """`redis-server` as production runs it (docker-compose.yml): append-only persistence, so that what was
    queued before a stop is there after the start; never evicting."""

    def __init__(self):
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="own-redis-"))
        self.process: subprocess.Popen | None = None

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.folder)]
        command += ["--appendonly", "yes", "--save", "", "--maxmemory-policy", "noeviction"]
        with (self.folder / "redis.log").open("ab") as log:  # the child keeps its own copy of the file
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start: {(self.folder / 'redis.log').read_text()[-2000:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM: Redis writes its append-only file and exits, as `docker compose stop` has it do."""
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)
            self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def postgres_bin() -> Path:
    """The folder of `initdb` and `pg_ctl`: Debian's packages keep them out of PATH, in
    /usr/lib/postgresql/<major>/bin (the newest major is taken)."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    majors = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3]))
    if not majors:
        raise RuntimeError("no PostgreSQL server binaries (pg_ctl) here: install the postgresql package")
    return majors[-1].parent


class PostgresServer:
    """A cluster of its own (initdb into a fresh folder), trust authentication on 127.0.0.1.

    `fsync=off` makes it start and write fast; it weakens nothing tested here: a restart (even an
    immediate one, a crash) keeps what was committed, as the operating system still holds the files."""

    def __init__(self):
        self.bin = postgres_bin()
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="own-postgres-"))
        self.data = self.folder / "data"
        # PostgreSQL refuses to run as root: the suite's containers run as root, so the server runs as the
        # postgres account that the package created.
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            account = pwd.getpwnam(self.user)
            os.chown(self.folder, account.pw_uid, account.pw_gid)

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, program: str, *args: str) -> str:
        command = [str(self.bin / program), *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=60).stdout

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "postgres.log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """`immediate` is a crash: no checkpoint, the next start replays the write-ahead log."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "immediate") -> None:
        self.stop(mode)
        self.start()

    def psql(self, database: str, sql: str) -> str:
        return self._run("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-d", self.url(database), "-c", sql)

    def load_schema_of(self, source_url: str, database: str) -> None:
        """Create `database` with the schema (no rows) of the database at `source_url`, the test database
        that pytest-django migrated: faster than migrating again."""
        self.psql("postgres", f'CREATE DATABASE "{database}"')
        dump = subprocess.run(
            [str(self.bin / "pg_dump"), "--schema-only", "--no-owner", "--no-privileges", "-d", source_url],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        # A newer pg_dump may emit settings an older server does not know.
        dump = re.sub(r"^SET transaction_timeout = .*$", "", dump, flags=re.MULTILINE)
        subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url(database)],
            input=dump,
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def close(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def own_redis():
    """A Redis of the module's own (tests that stop it, or whose workers must not share the suite's broker)."""
    server = RedisServer()
    server.start()
    yield server
    server.close()


class SmtpServer:
    """A small SMTP server of the test's own (no TLS, no authentication) that keeps what it receives: stopped, its
    port refuses connections as a down mail server does; started again, on the same port."""

    def __init__(self):
        self.port = free_port()
        self.messages: list[bytes] = []
        self._server = None

    def start(self) -> None:
        import socketserver
        import threading

        messages = self.messages

        class Session(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write(line.encode() + b"\r\n")

            def handle(self):
                self.reply("220 localhost test SMTP")
                while line := self.rfile.readline():
                    verb = line.decode(errors="replace").strip().split(" ", 1)[0].upper()
                    if verb == "EHLO":
                        self.reply("250-localhost")
                        self.reply("250 8BITMIME")
                    elif verb == "DATA":
                        self.reply("354 end with <CRLF>.<CRLF>")
                        data = b"".join(iter(lambda: self.rfile.readline(), b".\r\n"))
                        messages.append(data)
                        self.reply("250 queued")
                    elif verb == "QUIT":
                        self.reply("221 bye")
                        return
                    else:  # HELO, MAIL, RCPT, RSET, NOOP
                        self.reply("250 OK")

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", self.port), Session)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
