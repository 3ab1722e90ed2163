"""What one page costs inside one process, with no server and no client in the way (issue 20's profile).

    .venv/bin/python bench/page_cost.py            # about 30 s: a fresh database, then the pages
    .venv/bin/python bench/page_cost.py --profile  # and the 30 most expensive calls of the subscriber's capsule

bench/load.py measures the site as a whole (gunicorn, PostgreSQL, Redis, a client on the same machine); this isolates
the Python of one request: production settings, the demo book in a PostgreSQL database of its own (dropped and made
again), Django's test client, the best of --repeats runs of --requests requests after a warm-up. For each page it
prints milliseconds per request and the SQL statements one request ran, which is where a signed-in page's time goes.
"""

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: bench.load, config and apps import from the root

from bench.load import demo_site  # noqa: E402

DEMO_PASSWORD = "kernel-demo-pass"  # load_demo's (apps/demo)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="postgres://postgres:postgres@127.0.0.1:5432/kernel_page_cost")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13", help="a Redis database it may empty")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    commands = (("migrate", "prod"), ("load_demo", "dev"), ("collectstatic", "prod"))
    with demo_site(args.database_url, args.redis_url, prefix="page-cost-", commands=commands):
        measure(args)
    return 0


def measure(args) -> None:
    import django

    django.setup()
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.catalog.models import Capsule

    cache.clear()
    free = Capsule.objects.filter(access=Capsule.Access.FREE).order_by("number").first()
    locked = Capsule.objects.filter(access=Capsule.Access.LOCKED).order_by("number").first()
    anonymous, subscriber = Client(), Client()
    if not subscriber.login(email="subscriber@example.com", password=DEMO_PASSWORD):
        raise SystemExit("the demo subscriber could not sign in")
    pages = [
        ("landing, anonymous", anonymous, "/"),
        ("free capsule, anonymous", anonymous, free.get_absolute_url()),
        ("locked capsule, subscriber", subscriber, locked.get_absolute_url()),
    ]
    print(f"{'page':30s} {'ms/request':>10s}  statements of one request")
    for label, client, path in pages:
        best = best_ms(client, path, args.requests, args.repeats)
        with CaptureQueriesContext(connection) as queries:
            client.get(path, secure=True)
        tables = ", ".join(short(q["sql"]) for q in queries.captured_queries) or "none"
        print(f"{label:30s} {best:10.2f}  {len(queries.captured_queries)}: {tables}")
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(100):
            subscriber.get(locked.get_absolute_url(), secure=True)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


def best_ms(client, path: str, requests: int, repeats: int) -> float:
    for _ in range(requests):  # warm-up: templates, caches, the connection
        response = client.get(path, secure=True)
    assert response.status_code == 200, (path, response.status_code)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(requests):
            client.get(path, secure=True)
        best = min(best, (time.perf_counter() - started) / requests)
    return best * 1000


def short(sql: str) -> str:
    """The table a statement reads first: enough to tell the session from the access check."""
    words = sql.replace('"', "").split()
    return next((words[i + 1] for i, word in enumerate(words) if word.upper() == "FROM"), words[0])


if __name__ == "__main__":
    sys.exit(main())
