"""The GPU worker's database work per job (issue 30): the claim, the job's load, the record of its result.

    .venv/bin/python bench/gpu_db_cost.py [--readers 2000] [--history 100] [--jobs 60]

What the GPU task does around each judge call, on PostgreSQL with production settings: a database of its own
(dropped and made again), the demo book, --readers readers with --history finished submissions each (the claim
orders waiting submissions by their reader's last run) and --jobs compiled submissions of the sgemm example (its
real NVRTC output: the cubin in about 130 KB of JSON). Each job is claimed (`submission_gpu_claim`), loaded as the
task loads it, and recorded (`submission_gpu_record`) with a JudgeResult measured on the H200 (the reference
ladder's fixture). Prints, per step, the median and p90 milliseconds, the SQL statements of one job and the
characters of SQL they send (the parameters inlined, as the database receives them).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bench.load import demo_site  # noqa: E402

WORKER = "gpu0@bench"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="postgres://postgres:postgres@127.0.0.1:5432/kernel_gpu_db_cost")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13", help="a Redis database it may empty")
    parser.add_argument("--readers", type=int, default=2000)
    parser.add_argument("--history", type=int, default=100, help="finished submissions per reader")
    parser.add_argument("--jobs", type=int, default=60)
    args = parser.parse_args()

    commands = (("migrate", "prod"), ("load_demo", "dev"))
    with demo_site(args.database_url, args.redis_url, prefix="gpu-db-cost-", commands=commands):
        measure(args)
    return 0


def measure(args) -> None:
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from apps.submissions.models import GpuWorker, Submission
    from apps.submissions.services import pipeline

    waiting = populate(args)
    now = timezone.now()
    GpuWorker.objects.create(hostname=WORKER, gpu_kind="h200", started_at=now, last_seen_at=now)
    result = stored_result()
    times: dict[str, list[float]] = {"claim": [], "load": [], "record": []}
    statements: dict[str, tuple[int, int]] = {}
    for submission_id in waiting:
        with CaptureQueriesContext(connection) as claim_sql:
            began = time.perf_counter()
            claimed = pipeline.submission_gpu_claim(submission_id=submission_id, worker_name=WORKER, gpu_index="0")
            claimed_at = time.perf_counter()
        with CaptureQueriesContext(connection) as load_sql:
            job = load_job(Submission, claimed[0])
            loaded_at = time.perf_counter()
        with CaptureQueriesContext(connection) as record_sql:
            recorded = pipeline.submission_gpu_record(
                submission_id=job.pk, attempt=claimed[1], result=result, worker_name=WORKER
            )
            recorded_at = time.perf_counter()
        assert recorded, job.pk
        times["claim"].append((claimed_at - began) * 1e3)
        times["load"].append((loaded_at - claimed_at) * 1e3)
        times["record"].append((recorded_at - loaded_at) * 1e3)
        for step, sql in (("claim", claim_sql), ("load", load_sql), ("record", record_sql)):
            statements[step] = (len(sql.captured_queries), sum(len(q["sql"]) for q in sql.captured_queries))
    print(
        f"{Submission.objects.count()} submissions of {args.readers} readers; {len(waiting)} jobs of the sgemm example"
    )
    print(f"{'step':8s} {'median ms':>10s} {'p90 ms':>8s} {'statements':>11s} {'SQL characters':>15s}")
    for step, values in times.items():
        values.sort()
        p90 = values[int(0.9 * (len(values) - 1))]
        count, characters = statements[step]
        print(f"{step:8s} {statistics.median(values):10.2f} {p90:8.2f} {count:11d} {characters:15d}")


def populate(args) -> list[int]:
    """The readers, their history, and the compiled jobs (oldest first); returns the jobs' ids."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.submissions.models import Exercise, Submission
    from kernels import compile_submission, problems

    exercise = Exercise.objects.filter(problem="sgemm").first()
    source = (Path(problems.PROBLEMS_DIR) / "sgemm" / "example.cu").read_text()
    compiled = compile_submission(source, "sgemm", arch=exercise.arch)
    assert compiled.ok, compiled.message
    readers = User.objects.bulk_create(
        [User(email=f"reader{i}@bench.example.org", password="!") for i in range(args.readers)]
    )
    now = timezone.now()

    def submission(reader, **fields) -> Submission:
        return Submission(
            user=reader,
            exercise=exercise,
            source=source,
            source_sha256="0" * 64,
            gpu_kind="h200",
            arch=exercise.arch,
            **fields,
        )

    for first in range(0, len(readers), 100):
        history = []
        for reader in readers[first : first + 100]:
            for age in range(args.history):
                at = now - timedelta(minutes=7 * age + reader.pk % 60)
                history.append(
                    submission(reader, status=Submission.Status.PASSED, created_at=at, started_at=at, finished_at=at)
                )
        Submission.objects.bulk_create(history)
    step = max(1, len(readers) // args.jobs)
    jobs = Submission.objects.bulk_create(
        [
            submission(readers[i * step], status=Submission.Status.COMPILED, compiled=compiled.to_dict())
            for i in range(args.jobs)
        ]
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return [job.pk for job in jobs]


def load_job(model, submission_id: int):
    """What pipeline.submission_judge loads before it calls the judge."""
    from kernels import CompileResult

    job = model.objects.select_related("exercise").get(pk=submission_id)
    CompileResult.from_dict(job.compiled)
    return job


def stored_result():
    """A JudgeResult of the sgemm ladder measured on the H200 (the demo's fixture)."""
    import json

    from kernels.results import JudgeResult

    fixture = json.loads((ROOT / "apps/submissions/fixtures/reference_ladder_h200.json").read_text())
    entry = next(r for r in fixture["results"] if r["problem"] == "sgemm" and r["result"]["benchmarks"])
    return JudgeResult.from_dict(entry["result"])


if __name__ == "__main__":
    sys.exit(main())
