"""Load benchmark of the site (issue 20): gunicorn with production settings on PostgreSQL, measured from one client.

    .venv/bin/python bench/load.py            # about 4 minutes: set-up, 4 pages at 16 clients, 2 minutes of readers

In order:
1. The site: a fresh PostgreSQL database (dropped and made again), migrated; the demo book and accounts (`load_demo`,
   which production settings refuse, runs under the development settings against the same database); collectstatic
   into a temporary folder; the simulated readers' accounts and sessions (bench/readers.py). A Redis database of its
   own (cache, rate limits and the Celery broker) is emptied before and after.
2. gunicorn with production settings and the repository's docker/gunicorn.conf.py, --workers worker processes. The
   client plays the TLS proxy in front of it: X-Forwarded-Proto: https, and an X-Forwarded-For address per reader
   with TRUSTED_PROXIES=127.0.0.1 (the proxy, .env.example), so per-client limits count per reader.
3. Pages, each by --clients clients in a closed loop (a client sends its next request when the last one is
   answered) for --page-seconds after a warm-up, taken in turn in --rounds slices: a static file served by the same
   server (WhiteNoise), the landing page and a free capsule for an anonymous visitor, and a locked capsule for the
   demo subscriber, signed in through the sign-in form. Requests/s, p50 and p99 latency, and each page's share of
   the static file's requests/s.
4. A mixed run of --readers simulated readers for --mixed-seconds: anonymous visitors, signed-in readers and
   subscribers who browse, read (and save their position), search, review and submit kernels (accepted and queued;
   no compile worker runs), pausing between actions as people do (exponential think time, --think-s on average).
   Counts 5xx answers and failed connections (both must be 0), the site's designed limits that answered (429, and
   400 for a refused submission), and p50/p99 per action.

The client is one asyncio process (aiohttp) on the same machine as the server: on a small machine it takes a share
of the CPU that the server would otherwise have, and the figures say so. Exit status 1 when the mixed run saw a 5xx or
a failed connection, or (unless --no-targets) a page missed its target.
"""

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import psycopg
import redis

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# The targets: requests/s as a share of the static file's, and p99 in seconds (None: no latency target).
TARGETS = {"landing": (0.5, 0.100), "free capsule": (0.5, 0.100), "subscriber's capsule": (0.25, None)}
SEARCH_WORDS = ("warp", "shared memory", "roofline", "coalescing", "tensor core", "occupancy", "bank conflicts", "gemm")
REVIEW_TEXTS = (
    "Clear explanations and measurements I could reproduce on my own card.",
    "The ladder of kernels is the best part: each step says what it changed and why.",
    "Dense in places, but the figures make the memory hierarchy finally click for me.",
)
# What each kind of reader does, with weights: only signed-in readers review, only subscribers submit.
ACTIONS = {
    "anonymous": {"browse": 45, "read": 40, "search": 15},
    "reader": {"browse": 30, "read": 40, "search": 15, "review": 15},
    "subscriber": {"browse": 20, "read": 40, "search": 15, "review": 10, "submit": 15},
}


# --- measuring ---------------------------------------------------------------------------------------------------
@dataclass
class Tally:
    """What one page or action received: latencies of answered requests, statuses, failed connections."""

    latencies_s: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    span_s: float = 0.0  # a closed loop's counted time: from the warm-up's end to its last counted answer

    def percentile_ms(self, q: float) -> float:
        if not self.latencies_s:
            return float("nan")
        ordered = sorted(self.latencies_s)
        return 1000 * ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

    def add(self, other: "Tally") -> None:
        self.latencies_s += other.latencies_s
        self.statuses.update(other.statuses)
        self.failures.update(other.failures)
        self.span_s += other.span_s

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


class Client:
    """An HTTP client that keeps its own cookies. The site's cookies are Secure (production settings) and the
    client talks plain HTTP to the server as a TLS proxy would; aiohttp's cookie jar would withhold them."""

    def __init__(self, http: aiohttp.ClientSession, base: str, address: str, cookies: dict | None = None):
        self.http, self.base, self.address = http, base, address
        self.cookies = dict(cookies or {})
        self.origin = "https://" + urlsplit(base).netloc  # what a browser behind the proxy sends

    async def send(self, tally: Tally, method: str, path: str, data=None, headers=None) -> tuple[int, str] | None:
        sent = {"X-Forwarded-Proto": "https", "X-Forwarded-For": self.address, **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        if method == "POST":
            sent.update(Origin=self.origin, Referer=self.origin + path)
        started = time.perf_counter()
        try:
            async with self.http.request(
                method, self.base + path, data=data, headers=sent, allow_redirects=False
            ) as response:
                body = await response.read()
        except (aiohttp.ClientError, TimeoutError) as error:
            tally.failures[type(error).__name__] += 1
            return None
        tally.latencies_s.append(time.perf_counter() - started)
        tally.statuses[response.status] += 1
        self._keep_cookies(response.headers.getall("Set-Cookie", []))
        return response.status, body.decode(errors="replace")

    def _keep_cookies(self, set_cookies: list[str]) -> None:
        for header in set_cookies:
            for name, morsel in SimpleCookie(header).items():
                if morsel.value and morsel["max-age"] != "0":
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)


def new_http(connections: int) -> aiohttp.ClientSession:
    # Idle connections are dropped after 3 s, before gunicorn's keep-alive of 5 s closes them from its side (as
    # browsers retry on a connection the server closed, which aiohttp does not).
    connector = aiohttp.TCPConnector(limit=connections, keepalive_timeout=3)
    return aiohttp.ClientSession(
        connector=connector, cookie_jar=aiohttp.DummyCookieJar(), timeout=aiohttp.ClientTimeout(total=30)
    )


async def closed_loop(base: str, path: str, cookies: dict, clients: int, warmup_s: float, seconds: float) -> Tally:
    """`clients` clients each asking for `path` again as soon as answered; only requests started after the
    warm-up count, and each client makes at least one that counts: on a loaded machine a warm-up answer can come
    after the window's end, and the page would otherwise have no figure. The rate is over the counted span."""
    warm, recorded = Tally(), Tally()
    async with new_http(clients) as http:
        started = time.perf_counter()
        counting_from, stop = started + warmup_s, started + warmup_s + seconds

        async def one_client(number: int) -> None:
            client = Client(http, base, f"10.1.0.{number + 1}", cookies)
            counted = False
            while (now := time.perf_counter()) < stop or not counted:
                counted = now >= counting_from
                await client.send(recorded if counted else warm, "GET", path)

        await asyncio.gather(*(one_client(number) for number in range(clients)))
        recorded.span_s = max(stop, time.perf_counter()) - counting_from
    return recorded


# --- the simulated readers -----------------------------------------------------------------------------------------
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CSRF_HEADER = re.compile(r'"x-csrftoken": "([^"]+)"')


class Reader:
    def __init__(self, client: Client, kind: str, site: dict, tallies: dict, source: str):
        self.client, self.kind, self.site, self.tallies, self.source = client, kind, site, tallies, source
        self.has_read = False

    async def get(self, action: str, path: str, **kwargs):
        return await self.client.send(self.tallies[action], "GET", path, **kwargs)

    async def post(self, action: str, path: str, data: dict, token: str):
        return await self.client.send(self.tallies[action], "POST", path, data={**data, "csrfmiddlewaretoken": token})

    async def browse(self) -> None:
        pages = ["/", "/pricing/", "/reviews/"] + (["/progress/"] if self.kind != "anonymous" else [])
        await self.get("browse", random.choice(pages))

    async def read(self) -> None:
        # Free readers mostly read free capsules and sometimes meet the paywall of a locked one.
        shelf = self.site["locked"] if self.kind == "subscriber" or random.random() < 0.3 else self.site["free"]
        slug = random.choice(shelf)
        answer = await self.get("read", f"/capsules/{slug}/")
        if answer is None or answer[0] != 200 or self.kind == "anonymous":
            return
        token = CSRF_HEADER.search(answer[1])
        if token and (self.kind == "subscriber" or slug in self.site["free"]):
            await asyncio.sleep(random.uniform(0.5, 2))  # reader.js saves the position while the reader scrolls
            position = {"position": f"{random.random():.3f}", "heading": ""}
            saved = await self.post("read: save position", f"/capsules/{slug}/position/", position, token.group(1))
            self.has_read = self.has_read or (saved is not None and saved[0] == 200)

    async def search(self) -> None:
        await self.get("search", "/search/?q=" + random.choice(SEARCH_WORDS).replace(" ", "+"))

    async def review(self) -> None:
        if not self.has_read:  # the site asks readers to open a capsule before reviewing the book
            return await self.read()
        answer = await self.get("review: form", "/reviews/new/")
        path = "/reviews/new/"
        if answer is not None and answer[0] == 302:
            path = "/reviews/mine/edit/"
            answer = await self.get("review: form", path)
        if answer is None or not (token := CSRF_FIELD.search(answer[1])):
            return
        await asyncio.sleep(random.uniform(2, 6))  # writing it
        review = {"rating": str(random.randint(3, 5)), "title": "", "text": random.choice(REVIEW_TEXTS)}
        await self.post("review: post", path, review, token.group(1))

    async def submit(self) -> None:
        slug = random.choice(self.site["exercises"])
        answer = await self.get("submit: form", f"/capsules/{slug}/progress/")
        if answer is None or not (token := CSRF_FIELD.search(answer[1])):
            return
        await asyncio.sleep(random.uniform(2, 6))  # editing the kernel
        posted = await self.post("submit: post", f"/capsules/{slug}/submit/", {"source": self.source}, token.group(1))
        if posted is not None and posted[0] == 302:
            await self.get("submit: result page", f"/capsules/{slug}/progress/")

    async def live(self, stop: float, think_s: float) -> None:
        await asyncio.sleep(random.uniform(0, think_s))  # readers arrive over the first seconds, not at once
        actions = ACTIONS[self.kind]
        while time.perf_counter() < stop:
            action = random.choices(list(actions), weights=list(actions.values()))[0]
            await getattr(self, action)()
            await asyncio.sleep(min(random.expovariate(1 / think_s), 6 * think_s))


async def mixed_run(base: str, site: dict, seconds: float, think_s: float, source: str) -> dict[str, Tally]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    session_cookie = site["session_cookie"]
    async with new_http(len(site["readers"])) as http:
        stop = time.perf_counter() + seconds
        readers = []
        for number, account in enumerate(site["readers"]):
            cookies = {session_cookie: account["session"]} if account["session"] else {}
            client = Client(http, base, f"10.2.{number // 250}.{number % 250 + 1}", cookies)
            readers.append(Reader(client, account["kind"], site, tallies, source))
        await asyncio.gather(*(reader.live(stop, think_s) for reader in readers))
    return dict(tallies)


async def sign_in(base: str, email: str, password: str) -> dict:
    """The demo subscriber through allauth's sign-in form; returns the signed-in cookies."""
    async with new_http(1) as http:
        client, tally = Client(http, base, "10.3.0.1"), Tally()
        status, page = await client.send(tally, "GET", "/accounts/login/")
        token = CSRF_FIELD.search(page).group(1)
        answer = await client.send(
            tally, "POST", "/accounts/login/", data={"login": email, "password": password, "csrfmiddlewaretoken": token}
        )
        if answer is None or answer[0] != 302:
            raise SystemExit(f"signing in {email} failed: {answer and answer[0]} {tally.failures}")
        return client.cookies


# --- the site under test -------------------------------------------------------------------------------------------
class Site:
    """A fresh database, Redis database and gunicorn with production settings; stop() undoes them."""

    def __init__(self, args, workdir: Path):
        self.args, self.workdir = args, workdir
        self.port = args.port or _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.server: subprocess.Popen | None = None
        self.log = workdir / "server.log"
        self.env = {
            name: value
            for name, value in os.environ.items()
            if name not in ("DJANGO_SETTINGS_MODULE", "DEBUG", "STRIPE_TEST_MODE", "STRIPE_SECRET_KEY")
        }
        self.env.update(
            **production_env(args.database_url, args.redis_url, workdir, host="127.0.0.1"),
            TRUSTED_PROXIES="127.0.0.1",
            WEB_CONCURRENCY=str(args.workers),
            GUNICORN_LOG_LEVEL="warning",
            PORT=str(self.port),
        )

    def prepare(self) -> dict:
        self._database("create")
        redis.Redis.from_url(self.args.redis_url).flushdb()
        self._manage("migrate", "--noinput")
        self._manage("load_demo", settings="config.settings.dev")
        self._manage("collectstatic", "--noinput")
        made = subprocess.run(
            [PYTHON, "-m", "bench.readers", str(self.args.readers)],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        site = json.loads(made.stdout)
        site["session_cookie"] = "sessionid"
        return site

    def start(self) -> None:
        command = [
            str(Path(PYTHON).with_name("gunicorn")),
            "config.wsgi:application",
            "--config",
            str(ROOT / "docker" / "gunicorn.conf.py"),
            "--bind",
            f"127.0.0.1:{self.port}",
            # Its own control socket: the default one in $HOME would be taken from any other gunicorn on the machine.
            "--control-socket",
            str(self.workdir / "gunicorn.ctl"),
        ]
        with self.log.open("ab") as log:
            self.server = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise SystemExit(f"gunicorn exited:\n{self.log.read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("gunicorn did not listen within 60 s")

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
        with contextlib.suppress(redis.RedisError):
            redis.Redis.from_url(self.args.redis_url).flushdb()
        if not self.args.keep_database:
            self._database("drop")

    def _manage(self, *arguments: str, settings: str = "config.settings.prod") -> None:
        env = {**self.env, "DJANGO_SETTINGS_MODULE": settings}
        done = subprocess.run([PYTHON, "manage.py", *arguments], cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"manage.py {' '.join(arguments)} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")

    def _database(self, what: str) -> None:
        database_reset(self.args.database_url, create=what == "create")


def production_env(database_url: str, redis_url: str, workdir: Path, *, host: str) -> dict[str, str]:
    """Production settings for a site of the benchmark's own: a fresh secret key, its database and Redis database,
    and its static files and working files in `workdir`."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": host,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "STATIC_ROOT": str(workdir / "static"),
        "VAR_DIR": str(workdir / "var"),
    }


def database_reset(database_url: str, *, create: bool) -> None:
    """Drop the benchmark's database (it is the benchmark's own), and with `create` make it again, empty."""
    url = urlsplit(database_url)
    name = url.path.lstrip("/")
    with psycopg.connect(url._replace(path="/postgres").geturl(), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            connection.execute(f'CREATE DATABASE "{name}"')


@contextlib.contextmanager
def demo_site(database_url: str, redis_url: str, *, prefix: str, commands: tuple[tuple[str, str], ...]):
    """A site of a benchmark's own, in this process's environment: production settings (production_env) in a new
    working folder, a fresh PostgreSQL database, then manage.py's `commands` ((command, settings module) pairs, in
    order). The database and the folder are removed afterwards. Yields the folder."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update(**production_env(database_url, redis_url, workdir, host="testserver"), LOG_LEVEL="WARNING")
    database_reset(database_url, create=True)
    try:
        for command, settings in commands:
            env = {**os.environ, "DJANGO_SETTINGS_MODULE": f"config.settings.{settings}"}
            noinput = [] if command == "load_demo" else ["--noinput"]
            subprocess.run(
                [sys.executable, "manage.py", command, *noinput], cwd=ROOT, env=env, check=True, capture_output=True
            )
        yield workdir
    finally:
        database_reset(database_url, create=False)
        shutil.rmtree(workdir, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the run -------------------------------------------------------------------------------------------------------
def machine() -> str:
    lines = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), platform.processor())
    return f"{platform.node()}: {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


async def measure(args, site: Site, data: dict) -> dict:
    base = site.base
    async with new_http(1) as http:
        landing = await Client(http, base, "10.3.0.2").send(Tally(), "GET", "/")
    static = re.search(r'href="(/static/css/site[^"]*\.css)"', landing[1]).group(1)
    subscriber = await sign_in(base, "subscriber@example.com", args.demo_password)
    pages = {
        "static file": (static, {}),
        "landing": ("/", {}),
        "free capsule": (f"/capsules/{data['free'][0]}/", {}),
        "subscriber's capsule": (f"/capsules/{data['locked'][0]}/", subscriber),
    }
    results = {"pages": {}, "mixed": {}}
    # In rounds, each page a slice of its time in turn: other work on the machine (this one has 2 cores) then weighs
    # on every page alike rather than on whichever was measured when it came.
    tallies = {name: Tally() for name in pages}
    for round_number in range(args.rounds):
        for name, (path, cookies) in pages.items():
            warmup_s = args.warmup_seconds if round_number == 0 else min(0.5, args.warmup_seconds)
            tallies[name].add(
                await closed_loop(base, path, cookies, args.clients, warmup_s, args.page_seconds / args.rounds)
            )
    for name, (path, _cookies) in pages.items():
        tally = tallies[name]
        results["pages"][name] = {
            "path": path,
            "requests": len(tally.latencies_s),
            "rps": len(tally.latencies_s) / tally.span_s,
            "p50_ms": tally.percentile_ms(0.50),
            "p99_ms": tally.percentile_ms(0.99),
            "statuses": dict(tally.statuses),
            "failures": dict(tally.failures),
        }
    source = (ROOT / "kernels" / "reference" / "01_naive.cu").read_text()
    tallies = await mixed_run(base, data, args.mixed_seconds, args.think_s, source)
    for action, tally in sorted(tallies.items()):
        results["mixed"][action] = {
            "requests": sum(tally.statuses.values()),
            "p50_ms": tally.percentile_ms(0.50),
            "p99_ms": tally.percentile_ms(0.99),
            "statuses": dict(tally.statuses),
            "failures": dict(tally.failures),
            "server_errors": tally.server_errors,
        }
    return results


def report(args, results: dict) -> list[str]:
    """Prints the figures; returns the targets missed and the failures seen."""
    problems = []
    pages = results["pages"]
    static_rps = pages["static file"]["rps"]
    print(
        f"\nPages, {args.clients} clients each, {args.page_seconds:g} s in {args.rounds} rounds after"
        f" {args.warmup_seconds:g} s of warm-up"
    )
    print(f"{'page':<22} {'path':<44} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'/static':>8}  statuses")
    for name, page in pages.items():
        ratio = page["rps"] / static_rps if static_rps else float("nan")
        page["ratio"] = ratio
        statuses = " ".join(f"{status}:{count}" for status, count in sorted(page["statuses"].items()))
        failures = " ".join(f"{kind}:{count}" for kind, count in page["failures"].items())
        print(
            f"{name:<22} {page['path'][:44]:<44} {page['rps']:>8.1f} {page['p50_ms']:>8.1f} {page['p99_ms']:>8.1f}"
            f" {ratio:>8.3f}  {statuses} {failures}".rstrip()
        )
        if name in TARGETS:
            share, p99_s = TARGETS[name]
            missed = ratio < share or (p99_s is not None and page["p99_ms"] > 1000 * p99_s)
            wanted = f">= {share} of static" + (f", p99 < {1000 * p99_s:.0f} ms" if p99_s else "")
            print(f"{'':<22} target {wanted}: {'MISSED' if missed else 'met'}")
            if missed:
                problems.append(f"{name}: target {wanted} missed")
        if page["failures"] or any(status >= 500 for status in page["statuses"]):
            problems.append(f"{name}: 5xx or failed connections")
    mixed = results["mixed"]
    total = sum(action["requests"] for action in mixed.values())
    print(
        f"\nMixed run: {args.readers} readers, {args.mixed_seconds:g} s, think time {args.think_s:g} s on average:"
        f" {total} requests, {total / args.mixed_seconds:.1f}/s"
    )
    print(f"{'action':<22} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    for name, action in mixed.items():
        statuses = " ".join(f"{status}:{count}" for status, count in sorted(action["statuses"].items()))
        failures = " ".join(f"{kind}:{count}" for kind, count in action["failures"].items())
        print(
            f"{name:<22} {action['requests']:>8} {action['p50_ms']:>8.1f} {action['p99_ms']:>8.1f}  {statuses}"
            f" {failures}".rstrip()
        )
    server_errors = sum(action["server_errors"] for action in mixed.values())
    failed = sum(sum(action["failures"].values()) for action in mixed.values())
    print(f"5xx answers: {server_errors}; failed connections: {failed}")
    limits = {name: action["statuses"].get(429, 0) for name, action in mixed.items() if action["statuses"].get(429, 0)}
    refused = mixed.get("submit: post", {}).get("statuses", {}).get(400, 0)
    print(
        "Designed limits that answered: "
        + (", ".join(f"{name} 429 x{count}" for name, count in limits.items()) or "no 429")
        + (f"; submissions refused (400, quota or form) x{refused}" if refused else "; no submission refused")
    )
    if server_errors or failed:
        problems.append(f"mixed run: {server_errors} 5xx answers and {failed} failed connections")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes (default 4)")
    parser.add_argument("--clients", type=int, default=16, help="clients per page (default 16)")
    parser.add_argument("--page-seconds", type=float, default=15, help="measured seconds per page (default 15)")
    parser.add_argument("--warmup-seconds", type=float, default=3, help="unmeasured seconds before each page")
    parser.add_argument("--rounds", type=int, default=5, help="pages measured in turn, in this many rounds")
    parser.add_argument("--readers", type=int, default=200, help="simulated readers in the mixed run (default 200)")
    parser.add_argument("--mixed-seconds", type=float, default=120, help="length of the mixed run (default 120)")
    parser.add_argument("--think-s", type=float, default=5, help="readers' mean pause between actions (default 5)")
    parser.add_argument("--database-url", default="postgres://postgres:postgres@127.0.0.1:5432/kernel_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15", help="a Redis database it may empty")
    parser.add_argument("--port", type=int, default=0, help="gunicorn's port (default: a free one)")
    parser.add_argument("--demo-password", default="kernel-demo-pass", help="load_demo's password (apps/demo)")
    parser.add_argument("--keep-database", action="store_true", help="leave the database for a look afterwards")
    parser.add_argument("--no-targets", action="store_true", help="report the targets without failing on them")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    print(f"Load benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, on {machine()}")
    print("Command: " + " ".join(["bench/load.py", *(argv if argv is not None else sys.argv[1:])]))
    threads = os.environ.get("GUNICORN_THREADS", "2")
    print(
        f"Server: gunicorn, {args.workers} workers of {threads} threads (docker/gunicorn.conf.py), production settings,"
        " PostgreSQL, Redis; the client (one asyncio process) runs on the same machine and takes CPU from it."
    )
    print("Load average before the run (1, 5, 15 min): " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="loadbench-") as workdir:
        site = Site(args, Path(workdir))
        try:
            started = time.perf_counter()
            data = site.prepare()
            site.start()
            print(f"Site ready in {time.perf_counter() - started:.0f} s at {site.base}")
            results = asyncio.run(measure(args, site, data))
        except BaseException:
            if site.log.exists():
                print("server log (last lines):\n" + site.log.read_text()[-3000:], file=sys.stderr)
            raise
        finally:
            site.stop()
        kept_log = shutil.copy(site.log, Path(tempfile.gettempdir()) / "loadbench-server.log")
    problems = report(args, results)
    print(f"Server log: {kept_log}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.no_targets:
        problems = [problem for problem in problems if "target" not in problem]
    for problem in problems:
        print("FAILED: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
