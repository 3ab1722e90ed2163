"""Exercises: imported with the book from capsules' front matter, and edited in admin."""

from __future__ import annotations

from django.db import transaction

from apps.submissions.models import Exercise


def exercises_import(*, book, capsules) -> list[str]:
    """Create or update the exercises that capsules' front matter declares (apps.catalog.content_files);
    an exercise whose declaration disappeared is closed, not deleted, so its submissions stay.
    Runs inside book_import's transaction. Returns what changed, e.g. ["created 32 sgemm"]."""
    from apps.catalog.markdown import render_markdown
    from apps.catalog.models import Capsule

    changes = []
    by_number = {c.number: c for c in Capsule.objects.filter(book=book)}
    declared = set()
    for data in capsules:
        if data.exercise is None:
            continue
        declared.add(data.number)
        ex = data.exercise
        values = {
            "problem": ex.problem,
            "title": ex.title,
            "statement": ex.statement,
            "starter_source": ex.starter_source,
            "starter_name": ex.starter_name,
            "reference_step": ex.reference_step,
            "arch": ex.arch,
            "gpu_time_limit_s": ex.gpu_time_limit_s,
            "is_open": ex.is_open,
        }
        exercise = Exercise.objects.filter(capsule=by_number[data.number]).first()
        if exercise is not None and all(getattr(exercise, k) == v for k, v in values.items()):
            continue
        action = "created" if exercise is None else "updated"
        exercise = exercise or Exercise(capsule=by_number[data.number])
        for name, value in values.items():
            setattr(exercise, name, value)
        exercise.statement_html = render_markdown(ex.statement, figure_url=lambda name: name).html
        exercise.save()
        changes.append(f"{action} {data.number:02d} {ex.problem}")
    for gone in Exercise.objects.filter(capsule__book=book, is_open=True).exclude(capsule__number__in=declared):
        gone.is_open = False
        gone.save(update_fields=["is_open", "updated_at"])
        changes.append(f"closed {gone.capsule.number:02d} {gone.problem}")
    return changes


@transaction.atomic
def exercise_save(*, exercise: Exercise) -> Exercise:
    """An edit from admin: the statement's HTML follows its Markdown."""
    from apps.catalog.markdown import render_markdown

    exercise.statement_html = render_markdown(exercise.statement, figure_url=lambda name: name).html
    exercise.save()
    return exercise
