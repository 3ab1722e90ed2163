"""Submit kernels through the same service as the web form, then follow them through the queues until
the workers have judged them: an operator's end-to-end check of a deployment (compile worker, GPU
workers, broker, database).

    python manage.py submit_kernels --email subscriber@example.com --capsule kernel-8-warptiling \\
        @starter kernels/reference/08_warptiling.cu @hang kernels/reference/08_warptiling.cu

Items are .cu files, Triton .py files, `@starter` (the exercise's starter file) or `@hang` (a kernel that never ends: it
must come back TIMED_OUT after the exercise's GPU time limit, and the next one must still pass).
`--time-limit S` sets the exercise's GPU time limit first (so a hang is cut short).
"""

import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apps.submissions.models import Exercise, Submission
from apps.submissions.services import SubmissionRefused, submission_create

HANG = """// Never ends: reading the clock keeps the compiler from removing the loop.
__global__ void sgemm_hang(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    while (clock64() >= 0) {
    }
    C[0] = alpha * A[0] * B[0] + beta * C[0];
}
/* @plan
[[launch]]
kernel = "sgemm_hang"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
block = [32, 32]
*/
"""


class Command(BaseCommand):
    help = "Submit kernels as a reader and wait for the pipeline to judge them."

    def add_arguments(self, parser):
        parser.add_argument("items", nargs="+", help="FILE.cu, FILE.py (Triton), @starter or @hang")
        parser.add_argument("--email", required=True, help="the reader who submits")
        parser.add_argument("--capsule", required=True, help="the exercise capsule's slug")
        parser.add_argument("--time-limit", type=int, help="set the exercise's GPU time limit (seconds) first")
        parser.add_argument("--timeout", type=float, default=900.0, help="give up waiting after this many seconds")

    def handle(self, *args, items, email, capsule, time_limit, timeout, **options):
        user = get_user_model().objects.filter(email=email).first()
        exercise = Exercise.objects.select_related("capsule").filter(capsule__slug=capsule).first()
        if user is None or exercise is None:
            raise CommandError(f"no user {email!r} or no exercise on capsule {capsule!r} (run load_demo?)")
        if time_limit:
            exercise.gpu_time_limit_s = time_limit
            exercise.save(update_fields=["gpu_time_limit_s", "updated_at"])
        self.stdout.write(f"exercise: {exercise} · GPU time limit {exercise.gpu_time_limit_s} s · as {email}")
        submissions = []
        for item in items:
            language = Submission.Language.CUDA
            if item == "@starter":
                source, name = exercise.starter_source, f"starter ({exercise.starter_name})"
            elif item == "@hang":
                source, name = HANG, "hang (endless loop)"
            else:
                source, name = Path(item).read_text(), Path(item).name
                if name.endswith(".py"):
                    language = Submission.Language.TRITON
            try:
                submission = submission_create(
                    user=user, exercise=exercise, source=source, filename=name, language=language
                )
            except SubmissionRefused as refused:
                raise CommandError(f"{name}: refused: {refused.message}") from refused
            submissions.append((name, submission))
            self.stdout.write(f"{self._stamp()} submitted {name}: {submission.public_id}")
        self._follow(submissions, timeout)
        self._table(submissions)
        if any(not s.is_finished for _, s in submissions):
            raise CommandError("some submissions did not finish in time")

    def _stamp(self) -> str:
        return timezone.localtime().strftime("%H:%M:%S")

    def _follow(self, submissions, timeout: float) -> None:
        seen = {}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, submission in submissions:
                submission.refresh_from_db()
                state = (submission.status, submission.attempts)
                if seen.get(submission.pk) != state:
                    seen[submission.pk] = state
                    where = f" on {submission.worker}" if submission.status == Submission.Status.RUNNING else ""
                    self.stdout.write(f"{self._stamp()} {name}: {submission.get_status_display()}{where}")
            if all(s.is_finished for _, s in submissions):
                return
            time.sleep(0.5)

    def _table(self, submissions) -> None:
        self.stdout.write(
            "| item | status | verdict | attempts | worker | GPU | median ms | TFLOP/s | % of cuBLAS | message |"
        )
        self.stdout.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, s in submissions:
            figures = [f"{v:.3f}" if v is not None else "-" for v in (s.time_ms,)] + [
                f"{v:.1f}" if v is not None else "-" for v in (s.tflops, s.pct_of_baseline)
            ]
            self.stdout.write(
                f"| {name} | {s.status} | {s.verdict} | {s.attempts} | {s.worker or '-'} | {s.gpu_name or '-'} | "
                f"{' | '.join(figures)} | {s.message[:160]} |"
            )
