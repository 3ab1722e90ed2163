"""Issue 44: every exercise capsule's page ends with its exercise: the statement, the starter and the way to submit for
those who may read it; its title and what subscribers get for the others (never the statement or the starter)."""

from django.test import Client
from django.utils import timezone

from apps.submissions.models import GpuWorker
from tests.submissions.test_views import (  # noqa: F401  (fixtures)
    STARTER_SENTINEL,
    STATEMENT_SENTINEL,
    client_for,
    locked_exercise,
    subscriber,
)
from tests.subscriptions.visitors import make_visitor


def ending(body: str) -> str:
    start = body.index('id="capsule-exercise"')
    return body[start : body.index("</section>", start)]


def test_a_subscriber_reads_the_statement_and_starter_and_is_sent_to_the_editor(locked_exercise, subscriber):  # noqa: F811
    now = timezone.now()
    GpuWorker.objects.create(hostname="gpu0@node", gpu_kind="h200", started_at=now, last_seen_at=now)
    body = client_for(subscriber).get("/capsules/locked-two/").content.decode()
    exercise = ending(body)
    assert body.index("capsule__body") < body.index('id="capsule-exercise"')  # after the text
    assert locked_exercise.title in exercise and STATEMENT_SENTINEL in exercise
    assert STARTER_SENTINEL in exercise and "<details" in exercise and "01_naive.cu" in exercise
    assert 'href="/capsules/locked-two/progress/#exercise"' in exercise and "Open the editor and submit" in exercise
    assert "<strong>1 H200 GPU online</strong>" in exercise and "no queue" in exercise


def test_a_visitor_who_may_not_read_gets_the_title_only(locked_exercise):  # noqa: F811
    for client in (Client(), client_for(make_visitor("free", email="free@example.org"))):
        body = client.get("/capsules/locked-two/").content.decode()
        exercise = ending(body)
        assert locked_exercise.title in exercise and "Subscribers write this kernel" in exercise
        assert STATEMENT_SENTINEL not in body and STARTER_SENTINEL not in body
        assert "/progress/" not in exercise


def test_on_a_free_capsule_an_anonymous_visitor_is_asked_to_sign_in_on_a_shared_page(exercise):
    response = Client().get("/capsules/free-one/")
    exercise_html = ending(response.content.decode())
    assert "Multiply." in exercise_html and "Sign in to submit your kernel" in exercise_html
    assert "next=/capsules/free-one/progress/%23exercise" in exercise_html
    assert "GPU online" not in exercise_html and "is online right now" not in exercise_html  # nothing live: shared
    assert "public" in response["Cache-Control"]


def test_a_capsule_without_an_exercise_ends_with_none(mini_book):
    assert 'id="capsule-exercise"' not in Client().get("/capsules/locked-three/").content.decode()


def test_a_statement_edited_after_the_page_was_shown_is_seen_at_once(exercise):
    assert "Multiply." in Client().get("/capsules/free-one/").content.decode()
    exercise.statement_html = "<p>Multiply faster.</p>"
    exercise.save()
    assert "Multiply faster." in Client().get("/capsules/free-one/").content.decode()
