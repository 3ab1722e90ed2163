from celery import shared_task

from apps.reading.services import epub_build


# Idempotent (a redelivered or duplicate message finds the build ready or rebuilds the same
# content), so acks_late from the settings is safe here. A whole-book build takes about a second.
@shared_task(queue="default", soft_time_limit=120, time_limit=150)
def build_epub(build_id: int) -> str:
    return epub_build(build_id=build_id).status
