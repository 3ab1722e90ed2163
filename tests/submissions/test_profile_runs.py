"""Profiles made and asked for (issue 43): the profile queue and its place behind the judgements on the real Redis
broker, the profile queued once per passed judgement, the GPU worker's task and service on this node's real
behaviour, the report written under PROFILE_ROOT, a second delivery doing nothing, and a reader's "Profile again"
with its daily quota.

Submissions go through the real services: `submission_create`, NVRTC through `submission_compile`, and
`submission_gpu_start` + `submission_gpu_record` with a JudgeResult in the judge's schema (tests/submissions/
test_views.py's `judged`)."""

import threading
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import dateformat, timezone
from kombu import Consumer

from apps.submissions import gpu_node, services, tasks, worker
from apps.submissions.models import GpuWorker, Profile, ProfileRequest, Submission
from apps.submissions.services.profile_runs import report_name
from config.celery import app
from kernels import profile as profile_mod
from kernels.profile_run import ProfileRun
from tests.factories import UserFactory
from tests.submissions.conftest import make_exercise
from tests.submissions.test_profiles import profiled
from tests.submissions.test_views import judge_result, judged, make_submission

PROFILES = "gpu.h200.profile"
JUDGEMENTS = "gpu.h200"


def client_for(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def again_url(submission) -> str:
    return f"/submissions/{submission.public_id}/profile/again/"


def detail_url(submission) -> str:
    return f"/submissions/{submission.public_id}/"


@pytest.fixture
def broker_queues():
    """The test run's own Redis broker database (config/settings/test.py), its GPU queues emptied before and after."""
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        for name in (JUDGEMENTS, PROFILES):
            channel.queue_declare(queue=name)
            channel.queue_purge(name)
        yield connection
        for name in (JUDGEMENTS, PROFILES):
            channel.queue_purge(name)


def waiting(connection, name: str) -> list[tuple[str, list]]:
    """(task name, args) of every message waiting in queue `name`, taken off it."""
    found = []
    while (message := connection.default_channel.basic_get(queue=name, no_ack=True)) is not None:
        found.append((message.headers["task"], message.decode()[0]))
    return found


# --- The queue ------------------------------------------------------------------------------------------------------


def test_a_gpu_worker_consumes_its_judgements_first_then_its_profiles():
    command = gpu_node.worker_command("0", "h200")
    assert command[command.index("-Q") + 1] == "gpu.h200,gpu.h200.profile"
    assert gpu_node.profile_queue("b200") == "gpu.b200.profile"
    assert app.conf.broker_transport_options["queue_order_strategy"] == "priority"


@pytest.mark.parametrize(("strategy", "order"), [("priority", "JJP"), ("round_robin", "JPJ")])
def test_on_redis_a_profile_waits_until_no_judgement_does(broker_queues, strategy, order):
    """What the worker's consumer does with `-Q gpu.h200,gpu.h200.profile`, on the real broker: one message at a time
    (prefetch 1, as -c 1 --prefetch-multiplier 1), acknowledged when its job is done. With the setting's strategy a
    profile sent first still waits for both judgements; kombu's default would have run it between them."""
    options = {**app.conf.broker_transport_options, "queue_order_strategy": strategy}
    queues = [app.amqp.queues[JUDGEMENTS], app.amqp.queues[PROFILES]]
    with app.connection_for_write() as publisher:
        for name in (PROFILES, JUDGEMENTS, JUDGEMENTS):
            app.send_task("submissions.sweep", queue=name, connection=publisher)
    taken = []

    def run(body, message):
        taken.append("P" if message.delivery_info["routing_key"] == PROFILES else "J")
        message.ack()

    with app.connection_for_read(transport_options=options) as connection:
        channel = connection.channel()
        with Consumer(channel, queues=queues, callbacks=[run], prefetch_count=1):
            while len(taken) < 3:
                connection.drain_events(timeout=5)
    assert "".join(taken) == order


def test_a_pass_queues_one_profile_on_its_kinds_profile_queue_and_nothing_else_does(
    exercise, reader, settings, broker_queues, django_capture_on_commit_callbacks
):
    settings.PROFILES_ENABLED = True
    with django_capture_on_commit_callbacks(execute=True):
        passed = judged(reader, exercise, pct=1.2)
        failed = judged(reader, exercise, passed=False)
    assert passed.status == Submission.Status.PASSED and failed.status == Submission.Status.FAILED
    # The compile stage's judge message went to gpu.h200, the profile to gpu.h200.profile, for the pass only.
    assert waiting(broker_queues, PROFILES) == [("submissions.profile", [passed.pk])]
    # A redelivered result of the same attempt records nothing and queues nothing.
    with django_capture_on_commit_callbacks(execute=True):
        again = services.submission_gpu_record(submission_id=passed.pk, attempt=passed.attempts, result=judge_result(2))
    assert again is False and waiting(broker_queues, PROFILES) == []


def test_with_profiles_off_a_pass_queues_none(
    exercise, reader, settings, broker_queues, django_capture_on_commit_callbacks
):
    settings.PROFILES_ENABLED = False
    with django_capture_on_commit_callbacks(execute=True):
        judged(reader, exercise)
    assert waiting(broker_queues, PROFILES) == []


# --- The profile (GPU worker) -----------------------------------------------------------------------------------


def test_a_node_without_ncu_stores_a_no_ncu_profile_and_leaves_the_judgement_alone(
    exercise, reader, settings, tmp_path
):
    """No GPU is needed here, and nothing is stood in: the task gets the worker's real kernels.GpuJudge, whose
    `profile` holds the device lock and calls kernels.profile_run.profile_compiled, which looks for ncu before it
    touches the GPU (PROFILE_NCU names a file that does not exist) and answers with the document a node without
    Nsight Compute gives in production. Only the judgement before it is what these tests cannot make on a GPU."""
    settings.PROFILE_NCU = str(tmp_path / "no-such" / "ncu")
    settings.PROFILE_ROOT = tmp_path / "profiles"
    submission = judged(reader, exercise, pct=1.2)
    before = Submission.objects.values().get(pk=submission.pk)
    try:
        tasks.submission_profile_task(submission.pk)  # what the worker runs for the message: one service call
    finally:
        worker.judge_reset()
    profile = Profile.objects.get(submission=submission)
    assert profile.status == profile_mod.Status.NO_NCU.value and profile.findings == []
    assert profile.data["reason"] == f"no ncu found on this node (looked for {settings.PROFILE_NCU})"
    assert profile.data["gpu_name"] == "NVIDIA H200" and profile.report_file == ""
    after = Submission.objects.values().get(pk=submission.pk)
    assert after == before  # status, verdict, message, figures, result: untouched
    page = client_for(reader).get(detail_url(submission)).content.decode()
    assert "Profiling is off on this node: no ncu found on this node" in page
    assert "Download the Nsight Compute report" not in page and "Profile again" in page


class MadeOnAGpu:
    """Stands in for GpuJudge.profile where the answer is one only a GPU with ncu makes: a profiled document (the
    hand-written fixture metrics, tests/kernels/profiles/; `fields` set more of it) and the .ncu-rep's bytes. It
    records what it was asked."""

    def __init__(self, report: bytes | None = b"NCU-REP bytes", **fields):
        self.report, self.fields, self.calls = report, fields, []

    def profile(self, compiled, judged, *, ncu_setting="", budget_s=10.0):
        self.calls.append((compiled.problem, judged.verdict.value, ncu_setting, budget_s))
        return ProfileRun(profiled(**self.fields), self.report)


def test_the_report_is_written_under_its_public_id_and_served_to_its_owner(exercise, reader, settings, tmp_path):
    settings.PROFILE_ROOT, settings.PROFILE_NCU, settings.PROFILE_BUDGET_S = tmp_path, "/opt/ncu", 7.5
    submission = judged(reader, exercise)
    node = MadeOnAGpu()
    profile = services.submission_profile(submission_id=submission.pk, judge=node)
    assert node.calls == [("sgemm", "accepted", "/opt/ncu", 7.5)]  # the stored compile and judgement, the settings
    name = f"{submission.public_id.hex[:2]}/{submission.public_id}.ncu-rep"
    assert profile.report_file == report_name(submission) == name and profile.status == "profiled"
    assert (tmp_path / name).read_bytes() == b"NCU-REP bytes" and not list(tmp_path.rglob("*.partial"))
    response = client_for(reader).get(f"/submissions/{submission.public_id}/profile.ncu-rep")
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"NCU-REP bytes"
    # Profiled again on a node that makes no report: the old file goes with the old document.
    Submission.objects.filter(pk=submission.pk).update(finished_at=timezone.now())
    services.submission_profile(submission_id=submission.pk, judge=MadeOnAGpu(report=None))
    assert Profile.objects.get(submission=submission).report_file == "" and not (tmp_path / name).exists()


def test_the_report_goes_with_its_submission_and_with_its_readers_account(
    exercise, reader, settings, tmp_path, django_capture_on_commit_callbacks
):
    """A report holds the reader's source (ncu imports it): nothing of theirs may stay on disk after a deletion."""
    settings.PROFILE_ROOT = tmp_path
    first, second = judged(reader, exercise), judged(reader, exercise)
    for submission in (first, second):
        services.submission_profile(submission_id=submission.pk, judge=MadeOnAGpu())
    files = [tmp_path / report_name(submission) for submission in (first, second)]
    assert all(path.is_file() for path in files)
    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(pk=first.pk).delete()  # in admin, say
    assert not files[0].exists() and files[1].is_file()
    with django_capture_on_commit_callbacks(execute=True):
        reader.delete()
    assert not files[1].exists() and not Profile.objects.exists()


def test_a_second_delivery_does_nothing_and_a_request_or_a_rerun_makes_it_due_again(
    exercise, reader, settings, tmp_path
):
    settings.PROFILE_ROOT = tmp_path
    submission = judged(reader, exercise)
    node = MadeOnAGpu()
    assert services.submission_profile(submission_id=submission.pk, judge=node) is not None
    assert services.submission_profile(submission_id=submission.pk, judge=node) is None
    assert len(node.calls) == 1
    request = ProfileRequest.objects.create(user=reader, submission=submission)
    assert services.submission_profile(submission_id=submission.pk, judge=node) is not None
    request.refresh_from_db()
    assert request.done_at is not None and len(node.calls) == 2
    assert services.submission_profile(submission_id=submission.pk, judge=node) is None
    # A staff re-run judged it again later: the profile is older than the judgement.
    Submission.objects.filter(pk=submission.pk).update(finished_at=timezone.now() + timedelta(seconds=1))
    assert services.submission_profile(submission_id=submission.pk, judge=node) is not None and len(node.calls) == 3


def test_only_a_passed_submission_with_its_results_is_profiled(exercise, reader, settings, tmp_path):
    settings.PROFILE_ROOT = tmp_path
    node = MadeOnAGpu()
    failed = judged(reader, exercise, passed=False)
    queued = make_submission(reader, exercise)
    for submission in (failed, queued):
        assert services.submission_profile(submission_id=submission.pk, judge=node) is None
    passed = judged(reader, exercise)
    settings.PROFILES_ENABLED = False
    assert services.submission_profile(submission_id=passed.pk, judge=node) is None
    assert services.submission_profile(submission_id=10**9, judge=node) is None
    assert node.calls == [] and not Profile.objects.exists()


class WatchesItsWorker(MadeOnAGpu):
    """MadeOnAGpu whose `profile` first reads the GPU workers' rows, as the staff judge page would while ncu runs
    (issue 43); `fails` makes it end as a crashed or timed-out profile does, with an exception."""

    def __init__(self, fails: bool = False):
        super().__init__()
        self.fails, self.seen = fails, {}

    def profile(self, compiled, judged, *, ncu_setting="", budget_s=10.0):
        self.seen = dict(GpuWorker.objects.values_list("hostname", "profiling_submission"))
        if self.fails:
            raise RuntimeError("the profile child died")
        return super().profile(compiled, judged, ncu_setting=ncu_setting, budget_s=budget_s)


def gpu_workers(*hostnames: str) -> None:
    earlier = timezone.now() - timedelta(minutes=5)
    for hostname in hostnames:
        GpuWorker.objects.create(hostname=hostname, gpu_kind="h200", started_at=earlier, last_seen_at=earlier)


def profiling() -> dict:
    return dict(GpuWorker.objects.values_list("hostname", "profiling_submission"))


def test_the_worker_row_names_the_submission_it_profiles_while_the_profile_runs(exercise, reader, settings, tmp_path):
    settings.PROFILE_ROOT = tmp_path
    gpu_workers("gpu0@test", "gpu1@test")
    submission = judged(reader, exercise)
    before = GpuWorker.objects.values("last_seen_at", "current_submission").get(hostname="gpu0@test")
    node = WatchesItsWorker()
    assert services.submission_profile(submission_id=submission.pk, judge=node, worker_name="gpu0@test") is not None
    assert node.seen == {"gpu0@test": submission.pk, "gpu1@test": None}  # this worker only
    assert profiling() == {"gpu0@test": None, "gpu1@test": None}
    after = GpuWorker.objects.values("last_seen_at", "current_submission").get(hostname="gpu0@test")
    assert after["last_seen_at"] > before["last_seen_at"]
    assert after["current_submission"] == before["current_submission"]  # a profile is not a judgement: untouched


def test_a_profile_that_raises_leaves_its_worker_shown_idle(exercise, reader, settings, tmp_path):
    settings.PROFILE_ROOT = tmp_path
    gpu_workers("gpu0@test")
    submission = judged(reader, exercise)
    node = WatchesItsWorker(fails=True)
    with pytest.raises(RuntimeError, match="the profile child died"):
        services.submission_profile(submission_id=submission.pk, judge=node, worker_name="gpu0@test")
    assert node.seen == {"gpu0@test": submission.pk} and profiling() == {"gpu0@test": None}
    assert not Profile.objects.exists()


def test_the_clearing_leaves_a_row_that_names_another_submission(exercise, reader, settings, tmp_path):
    """The `finally` clears only its own mark: a row that meanwhile names another submission keeps it."""
    settings.PROFILE_ROOT = tmp_path
    gpu_workers("gpu0@test")
    first, second = judged(reader, exercise), judged(reader, exercise)

    class Overtaken(MadeOnAGpu):
        def profile(self, compiled, judged, **kwargs):
            GpuWorker.objects.update(profiling_submission=second)
            return super().profile(compiled, judged, **kwargs)

    services.submission_profile(submission_id=first.pk, judge=Overtaken(), worker_name="gpu0@test")
    assert profiling() == {"gpu0@test": second.pk}


def test_the_task_shows_the_profile_on_its_own_workers_row(exercise, reader, settings, tmp_path, monkeypatch):
    """The task names the worker by its Celery node name (worker.node_name), the row's hostname."""
    settings.PROFILE_ROOT = tmp_path
    gpu_workers("gpu0@test", "gpu1@test")
    submission = judged(reader, exercise)
    node = WatchesItsWorker()
    monkeypatch.setattr(worker, "_node_name", "gpu1@test")
    monkeypatch.setattr(worker, "judge", lambda: node)
    tasks.submission_profile_task(submission.pk)
    assert node.seen == {"gpu0@test": None, "gpu1@test": submission.pk}
    assert profiling() == {"gpu0@test": None, "gpu1@test": None} and Profile.objects.filter(submission=submission)


def test_a_stopped_or_restarted_worker_never_shows_a_profile(exercise, reader, monkeypatch):
    """A worker killed while profiling never ran the `finally`: its stop and its next registration clear the mark."""
    gpu_workers("gpu0@test")
    submission = judged(reader, exercise)
    monkeypatch.setattr("sys.argv", ["celery", "-A", "config", "worker", "-Q", "gpu.h200,gpu.h200.profile"])
    monkeypatch.setattr(worker, "_node_name", "gpu0@test")
    monkeypatch.setattr(worker, "sandbox_summary", lambda: "landlock")
    monkeypatch.setattr(worker, "_heartbeat_stop", threading.Event())  # the stop sets it: not this module's own
    monkeypatch.setenv("GPU_NAME", "NVIDIA H200")  # not asked of nvidia-smi
    GpuWorker.objects.update(profiling_submission=submission)
    worker._stop_gpu_process()
    stopped = GpuWorker.objects.get()
    assert stopped.stopped_at is not None and stopped.profiling_submission is None
    GpuWorker.objects.update(profiling_submission=submission)
    worker.register()
    assert GpuWorker.objects.get().profiling_submission is None


# --- An identical kernel's profile, copied -------------------------------------------------------------------------


def reused_sentence(donor: Profile) -> str:
    on = dateformat.format(timezone.localtime(donor.updated_at), "j M Y")
    same = "the same source, problem and GPU"
    return f"Profiled on {on} for an identical kernel ({same}); “Profile again” makes a fresh one."


@pytest.fixture
def donor(exercise, reader, settings, tmp_path) -> Profile:
    """The starter kernel as submitted and profiled on a GPU (9.8 GPU-seconds): the profile the next identical
    kernel's may be copied from."""
    settings.PROFILE_ROOT, settings.PROFILE_REUSE_DAYS = tmp_path, 30
    submission = judged(reader, exercise)
    return services.submission_profile(submission_id=submission.pk, judge=MadeOnAGpu(gpu_seconds=9.8))


def test_an_identical_kernel_gets_a_copy_of_the_recent_profile_and_no_gpu_run(exercise, donor, tmp_path):
    gpu_workers("gpu0@test")
    other = UserFactory(email="other@example.org")
    second = judged(other, exercise)  # the same starter, unchanged, by another reader
    seen_before = GpuWorker.objects.get().last_seen_at
    node = MadeOnAGpu(report=b"another run's bytes")
    copy = services.submission_profile(submission_id=second.pk, judge=node, worker_name="gpu0@test")
    assert node.calls == []  # no ncu, no GPU
    worker_row = GpuWorker.objects.get()
    assert worker_row.profiling_submission is None and worker_row.last_seen_at == seen_before  # never shown profiling
    assert copy.report_file == report_name(second) != donor.report_file
    assert (tmp_path / copy.report_file).read_bytes() == (tmp_path / donor.report_file).read_bytes() == b"NCU-REP bytes"
    assert copy.findings == donor.findings and copy.findings
    assert sorted(copy.finding_rows.values_list("rule", flat=True)) == sorted(f["rule"] for f in donor.findings)
    assert copy.status == donor.status == "profiled" and copy.data["metrics"] == donor.data["metrics"]
    assert donor.data["gpu_seconds"] == 9.8 and copy.data["gpu_seconds"] == 0.0
    assert (
        copy.data["reused_from_profile_at"] == donor.updated_at.isoformat()
        and donor.data["reused_from_profile_at"] == ""
    )
    page = client_for(other).get(detail_url(second)).content.decode()
    assert reused_sentence(donor) in page and "Download the Nsight Compute report" in page
    assert (
        "identical kernel" not in client_for(donor.submission.user).get(detail_url(donor.submission)).content.decode()
    )
    # A second delivery of the copy's message finds it made.
    assert services.submission_profile(submission_id=second.pk, judge=node) is None and node.calls == []


def test_the_copied_report_is_served_only_to_its_own_submissions_owner(exercise, donor, staff):
    other = UserFactory(email="other@example.org")
    second = judged(other, exercise)
    services.submission_profile(submission_id=second.pk, judge=MadeOnAGpu())
    copied, original = f"{detail_url(second)}profile.ncu-rep", f"{detail_url(donor.submission)}profile.ncu-rep"
    for visitor in (other, staff):
        response = client_for(visitor).get(copied)
        assert response.status_code == 200 and b"".join(response.streaming_content) == b"NCU-REP bytes"
    assert client_for(donor.submission.user).get(copied).status_code == 404  # the donor's owner: not theirs
    assert client_for(other).get(original).status_code == 404  # nor the donor's report to the copy's owner
    anonymous = Client().get(copied)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def another_problem(exercise):
    capsule = exercise.capsule.book.capsules.get(number=3)
    return {"exercise": make_exercise(capsule, problem="softmax")}


@pytest.mark.parametrize(
    ("donor_fields", "profile_fields", "reuse_days"),
    [
        pytest.param({"source_sha256": "0" * 64}, {}, 30, id="another source"),
        pytest.param({"language": "triton"}, {}, 30, id="another language"),
        pytest.param({"arch": "sm_90a"}, {}, 30, id="another arch"),
        pytest.param({"gpu_kind": "b200"}, {}, 30, id="another gpu kind"),
        pytest.param(another_problem, {}, 30, id="another problem"),
        pytest.param({}, {"updated_at": timezone.now() - timedelta(days=31)}, 30, id="older than the window"),
        pytest.param({}, {"status": profile_mod.Status.FAILED.value}, 30, id="donor failed"),
        pytest.param({}, {"status": profile_mod.Status.OFF.value}, 30, id="donor off"),
        pytest.param({}, {"schema_version": profile_mod.PROFILE_SCHEMA_VERSION + 1}, 30, id="donor of another schema"),
        pytest.param({}, {}, 0, id="reuse off"),
    ],
)
def test_no_matching_recent_profiled_donor_means_a_fresh_profile(
    exercise, donor, settings, donor_fields, profile_fields, reuse_days
):
    settings.PROFILE_REUSE_DAYS = reuse_days
    fields = donor_fields(exercise) if callable(donor_fields) else donor_fields
    Submission.objects.filter(pk=donor.submission_id).update(**fields)
    Profile.objects.filter(pk=donor.pk).update(**profile_fields)
    second = judged(UserFactory(email="other@example.org"), exercise)
    node = MadeOnAGpu(report=b"a fresh run")
    profile = services.submission_profile(submission_id=second.pk, judge=node)
    assert len(node.calls) == 1 and profile.data["reused_from_profile_at"] == ""
    assert (settings.PROFILE_ROOT / profile.report_file).read_bytes() == b"a fresh run"


def test_a_pending_request_to_profile_again_is_answered_by_a_fresh_profile(exercise, donor, reader, settings):
    """The owner of a copy who asks again gets ncu's own run, even while the copy's donor is recent."""
    second = judged(reader, exercise)
    services.submission_profile(submission_id=second.pk, judge=MadeOnAGpu())
    assert Profile.objects.get(submission=second).data["reused_from_profile_at"]
    request = ProfileRequest.objects.create(user=reader, submission=second)
    node = MadeOnAGpu(report=b"a fresh run")
    profile = services.submission_profile(submission_id=second.pk, judge=node)
    assert len(node.calls) == 1 and profile.data["reused_from_profile_at"] == "" and profile.data["gpu_seconds"] is None
    assert (settings.PROFILE_ROOT / profile.report_file).read_bytes() == b"a fresh run"
    request.refresh_from_db()
    assert request.done_at is not None
    assert "identical kernel" not in client_for(reader).get(detail_url(second)).content.decode()


def test_a_donor_whose_report_is_gone_is_not_copied(exercise, donor, settings):
    (settings.PROFILE_ROOT / donor.report_file).unlink()
    second = judged(UserFactory(email="other@example.org"), exercise)
    node = MadeOnAGpu(report=b"a fresh run")
    profile = services.submission_profile(submission_id=second.pk, judge=node)
    assert len(node.calls) == 1 and profile.data["reused_from_profile_at"] == ""
    assert (settings.PROFILE_ROOT / profile.report_file).read_bytes() == b"a fresh run"


def test_a_copy_is_never_copied_so_its_donors_age_holds(exercise, donor, reader):
    """A copy's updated_at is when it was copied: copied on, the first profile would outlive PROFILE_REUSE_DAYS."""
    second, third = judged(reader, exercise), judged(reader, exercise)
    services.submission_profile(submission_id=second.pk, judge=MadeOnAGpu())
    Profile.objects.filter(pk=donor.pk).update(updated_at=timezone.now() - timedelta(days=31))
    node = MadeOnAGpu(report=b"a fresh run")
    profile = services.submission_profile(submission_id=third.pk, judge=node)
    assert len(node.calls) == 1 and profile.data["reused_from_profile_at"] == ""


def test_a_profile_recorded_before_copies_existed_is_copied_and_both_load(exercise, donor, reader):
    """Documents stored without `reused_from_profile_at` (no schema bump) load as made on a GPU, and are donors."""
    old = {key: value for key, value in donor.data.items() if key != "reused_from_profile_at"}
    Profile.objects.filter(pk=donor.pk).update(data=old)
    assert profile_mod.Profile.from_dict(old).reused_from_profile_at == ""
    second = judged(reader, exercise)
    node = MadeOnAGpu()
    copy = services.submission_profile(submission_id=second.pk, judge=node)
    assert node.calls == [] and profile_mod.Profile.from_dict(copy.data).reused_from_profile_at
    assert "identical kernel" not in client_for(reader).get(detail_url(donor.submission)).content.decode()


# --- "Profile again" ----------------------------------------------------------------------------------------------


@pytest.fixture
def profiled_submission(exercise, reader, settings, tmp_path):
    settings.PROFILE_ROOT, settings.PROFILE_REQUESTS_PER_DAY = tmp_path, 5
    submission = judged(reader, exercise)
    services.submission_profile(submission_id=submission.pk, judge=MadeOnAGpu())
    return submission


def answered(submission) -> None:
    """The GPU worker made the profile asked for: the request is no longer on its way."""
    ProfileRequest.objects.filter(submission=submission).update(done_at=timezone.now())


def test_the_sixth_request_in_24_hours_is_refused_with_the_count(
    reader, profiled_submission, broker_queues, django_capture_on_commit_callbacks
):
    client = client_for(reader)
    for left in (4, 3, 2, 1, 0):
        with django_capture_on_commit_callbacks(execute=True):  # the request's transaction commits: the task is sent
            response = client.post(again_url(profiled_submission), follow=True)
        assert response.redirect_chain == [(detail_url(profiled_submission), 302)]
        assert "A new profile is queued" in response.content.decode()
        assert f"{left} of your 5 requests a day left." in response.content.decode()
        answered(profiled_submission)
    assert [task for task, _args in waiting(broker_queues, PROFILES)] == ["submissions.profile"] * 5
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(again_url(profiled_submission), follow=True).content.decode()
    assert "You have asked for 5 profiles in the last 24 hours, the most a reader may: 0 left." in page
    assert "The next one is possible from" in page and 'action="' + again_url(profiled_submission) not in page
    assert ProfileRequest.objects.filter(user=reader).count() == 5 and waiting(broker_queues, PROFILES) == []
    # A day later the oldest no longer counts.
    ProfileRequest.objects.filter(pk=ProfileRequest.objects.earliest("created_at").pk).update(
        created_at=timezone.now() - timedelta(hours=24, minutes=1)
    )
    assert "1 of your 5 requests a day left." in client.get(detail_url(profiled_submission)).content.decode()
    assert "A new profile is queued" in client.post(again_url(profiled_submission), follow=True).content.decode()


def test_a_request_on_its_way_is_not_asked_twice(
    reader, profiled_submission, broker_queues, django_capture_on_commit_callbacks
):
    client = client_for(reader)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(again_url(profiled_submission))
        page = client.post(again_url(profiled_submission), follow=True).content.decode()
    assert "A new profile of this submission is already on its way" in page and "data-profile-pending" in page
    assert ProfileRequest.objects.count() == 1 and len(waiting(broker_queues, PROFILES)) == 1


def test_staff_are_not_limited(staff, exercise, settings, tmp_path, broker_queues):
    settings.PROFILE_ROOT, settings.PROFILE_REQUESTS_PER_DAY = tmp_path, 5
    submission = judged(staff, exercise)
    services.submission_profile(submission_id=submission.pk, judge=MadeOnAGpu())
    client = client_for(staff)
    for _ in range(7):
        page = client.post(again_url(submission), follow=True).content.decode()
        assert "A new profile is queued" in page and "requests a day left" not in page
        answered(submission)
    assert ProfileRequest.objects.filter(user=staff).count() == 7
    assert "Staff: no daily limit." in client.get(detail_url(submission)).content.decode()


def test_anyone_but_the_owner_gets_404_and_asks_nothing(
    profiled_submission, staff, broker_queues, django_capture_on_commit_callbacks
):
    other = UserFactory(email="other@example.org")
    for visitor in (other, staff):  # staff see the report, but a request spends the owner's quota
        with django_capture_on_commit_callbacks(execute=True):
            assert client_for(visitor).post(again_url(profiled_submission)).status_code == 404
    assert "Profile again" not in client_for(staff).get(detail_url(profiled_submission)).content.decode()
    anonymous = Client().post(again_url(profiled_submission))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert not ProfileRequest.objects.exists() and waiting(broker_queues, PROFILES) == []


def test_the_request_is_a_csrf_protected_post(reader, profiled_submission):
    assert client_for(reader).get(again_url(profiled_submission)).status_code == 405
    assert client_for(reader, enforce_csrf_checks=True).post(again_url(profiled_submission)).status_code == 403
    assert not ProfileRequest.objects.exists()


def unprofiled(reader, exercise, settings, tmp_path) -> Submission:
    """Accepted with no profile made: the profile its judgement queued is never run here (as on a site where profiling
    was off when it passed, or for a submission older than profiles)."""
    settings.PROFILE_ROOT, settings.PROFILE_REQUESTS_PER_DAY = tmp_path, 5
    submission = judged(reader, exercise)
    assert not Profile.objects.filter(submission=submission).exists()
    return submission


def test_the_owner_of_a_pass_without_a_profile_asks_for_one(
    reader, exercise, settings, tmp_path, broker_queues, django_capture_on_commit_callbacks
):
    submission = unprofiled(reader, exercise, settings, tmp_path)
    client = client_for(reader)
    page = client.get(detail_url(submission)).content.decode()
    assert "No profile yet" in page and 'action="' + again_url(submission) in page
    assert ">Profile</button>" in page and "csrfmiddlewaretoken" in page and "5 of your 5 requests a day left." in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(again_url(submission), follow=True)
    assert response.redirect_chain == [(detail_url(submission), 302)]
    page = response.content.decode()
    assert "A new profile is queued" in page and "4 of your 5 requests a day left." in page
    assert "No profile yet" in page and "data-profile-pending" in page  # on its way: no second button
    assert waiting(broker_queues, PROFILES) == [("submissions.profile", [submission.pk])]
    assert list(ProfileRequest.objects.values_list("user", "submission", "done_at")) == [
        (reader.pk, submission.pk, None)
    ]


def test_a_pass_without_a_profile_offers_nothing_to_anyone_else(
    reader, exercise, staff, settings, tmp_path, broker_queues, django_capture_on_commit_callbacks
):
    submission = unprofiled(reader, exercise, settings, tmp_path)
    other = UserFactory(email="other@example.org")
    assert client_for(other).get(detail_url(submission)).status_code == 404
    page = client_for(staff).get(detail_url(submission)).content.decode()  # staff see the report, not the form
    assert "No profile yet" not in page and again_url(submission) not in page
    for visitor in (other, staff):
        with django_capture_on_commit_callbacks(execute=True):
            assert client_for(visitor).post(again_url(submission)).status_code == 404
    assert not ProfileRequest.objects.exists() and waiting(broker_queues, PROFILES) == []


def test_a_failed_submission_or_profiles_off_show_no_profile_button(reader, exercise, settings, tmp_path):
    failed = judged(reader, exercise, passed=False)
    page = client_for(reader).get(detail_url(failed)).content.decode()
    assert failed.status == Submission.Status.FAILED
    assert "No profile yet" not in page and again_url(failed) not in page
    passed = unprofiled(reader, exercise, settings, tmp_path)
    settings.PROFILES_ENABLED = False  # a request would be refused: none is offered
    page = client_for(reader).get(detail_url(passed)).content.decode()
    assert "No profile yet" not in page and again_url(passed) not in page


def test_a_submission_that_did_not_pass_or_profiles_off_are_refused(reader, exercise, profiled_submission, settings):
    failed = judged(reader, exercise, passed=False)
    page = client_for(reader).post(again_url(failed), follow=True).content.decode()
    assert "Only accepted submissions are profiled." in page
    settings.PROFILES_ENABLED = False
    page = client_for(reader).post(again_url(profiled_submission), follow=True).content.decode()
    assert "Profiling is off on this site for now" in page and "Profile again" not in page
    assert not ProfileRequest.objects.exists()


def test_a_request_the_broker_refused_is_taken_back_and_neither_counts_nor_blocks(
    reader, profiled_submission, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    from tests.outages import broker_down

    client = client_for(reader)
    with broker_down(monkeypatch), django_capture_on_commit_callbacks(execute=True):
        client.post(again_url(profiled_submission))
    assert any("broker refused its profile" in r.getMessage() for r in caplog.records)
    assert not ProfileRequest.objects.exists()
    page = client.get(detail_url(profiled_submission)).content.decode()
    assert "5 of your 5 requests a day left." in page and "data-profile-pending" not in page
