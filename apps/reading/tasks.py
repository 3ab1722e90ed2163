from celery import shared_task

from apps.reading.services import epub_build


# On the "default" queue (the project's default). Idempotent: a redelivered or duplicate message
# finds the build ready, or builds the same content again, so acks_late from the settings is safe.
# A whole-book build takes well under a second; the limits only stop a runaway.
@shared_task(name="reading.build_epub", soft_time_limit=120, time_limit=150)
def build_epub(build_id: int) -> str:
    return epub_build(build_id=build_id).status
