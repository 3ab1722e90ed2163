"""Issue 42, item 6: the data export is written while it is read, so a worker's memory stays bounded whatever the
reader has stored. 400 submissions with large sources and compile logs (about 100 MB of JSON) used to be built as
one document in memory (its dict, its text and its bytes at once); streamed, the peak is a few chunks of rows."""

import hashlib
import json
import tracemalloc

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.test import Client

from apps.accounts.export import account_export, json_chunks
from apps.submissions.models import Exercise, Submission
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
SUBMISSIONS = 400
TEXT_BYTES = 128 * 1024  # a source and a compile log each this large
PEAK_BOUND = 24 * 1024 * 1024  # 11 MiB measured; building the document whole (HEAD) peaked at 305 MiB


@pytest.fixture
def heavy_reader(mini_book):
    reader = UserFactory()
    exercise = Exercise.objects.create(
        capsule=mini_book.capsules.get(number=1), problem="vector_add", title="Add", statement="Add.",
        starter_source="x", starter_name="x.cu",
    )  # fmt: skip
    line = "// a long kernel line that takes space and means nothing much at all\n"
    source = line * (TEXT_BYTES // len(line))
    Submission.objects.bulk_create(
        Submission(
            user=reader,
            exercise=exercise,
            source=f"// {n}\n{source}",
            compile_log=source,
            gpu_kind="h200",
            arch="sm_90",
            source_sha256=hashlib.sha256(f"{n}".encode()).hexdigest(),
        )
        for n in range(SUBMISSIONS)
    )
    return reader


def test_the_export_of_400_large_submissions_streams_in_bounded_memory(heavy_reader):
    """Fails on HEAD: JsonResponse builds the whole document (about 100 MB of text, more as objects) before sending."""
    client = Client()
    client.force_login(heavy_reader)
    tracemalloc.start()
    try:
        response = client.get("/accounts/profile/data.json")
        total = sum(len(chunk) for chunk in response.streaming_content)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 200 and total > SUBMISSIONS * 2 * TEXT_BYTES
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.1f} MiB for {total / 2**20:.0f} MiB of JSON"


def test_the_streamed_export_is_the_document_json_dumps_wrote(mini_book):
    """The text is exactly what json.dumps(indent=2) made of the same data before the export was streamed."""
    reader = UserFactory()
    document = account_export(reader)
    streamed = "".join(json_chunks(document))
    whole = json.loads(streamed)
    materialised = json.loads(json.dumps(whole))
    assert streamed == json.dumps(materialised, indent=2, cls=DjangoJSONEncoder, ensure_ascii=True)
    assert set(whole) == {"format_version", "exported_at", "profile", "billing", "reading_progress", "reviews",
                          "submissions"}  # fmt: skip
