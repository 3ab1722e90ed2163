from django.core.management.base import BaseCommand

from apps.catalog.models import Capsule
from apps.catalog.services import capsule_render

RENDERED = ("body_html", "body_text", "toc", "words", "minutes")


class Command(BaseCommand):
    help = (
        "Render every capsule's stored Markdown again with the current pipeline, after the pipeline changed (issue "
        "44: figures sized from their SVG). Only what the renderer makes is rewritten: a capsule's text, figures and "
        "revision stay as they are, and a capsule whose HTML comes out the same is not saved."
    )

    def handle(self, *args, **options):
        changed = 0
        for capsule in Capsule.objects.select_related("book").order_by("book_id", "number"):
            before = [getattr(capsule, name) for name in RENDERED]
            capsule_render(capsule=capsule)
            if [getattr(capsule, name) for name in RENDERED] != before:
                capsule.save(update_fields=[*RENDERED, "updated_at"])  # updated_at: public pages see it at once
                changed += 1
        self.stdout.write(f"{changed} capsule{'s' if changed != 1 else ''} rendered again")
