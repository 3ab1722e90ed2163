"""A reader's reading progress in their data export (apps.accounts.export); it goes with their account (CASCADE)."""

from apps.reading.models import ReadingProgress


def reading_export(user) -> list[dict]:
    rows = ReadingProgress.objects.filter(user=user).select_related("capsule").order_by("capsule__number")
    return [
        {
            "capsule": {"number": row.capsule.number, "slug": row.capsule.slug, "title": row.capsule.title},
            "position": row.position,
            "furthest_position": row.furthest_position,
            "heading": row.heading,
            "started_at": row.started_at,
            "last_read_at": row.last_read_at,
            "completed_at": row.completed_at,
        }
        for row in rows
    ]
