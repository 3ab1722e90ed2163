from django.db import migrations, models


def count_prose_words(apps, schema_editor):
    # A capsule's words are its prose now, code listings left out (issue 44). An import re-renders only capsules
    # whose files changed, so the stored counts are recounted here from the stored HTML, with the catalogue's one
    # counting function (imported here, not copied: a copy would drift from what imports and admin saves store).
    from apps.catalog.reading_time import reading_minutes
    from apps.catalog.selectors import capsule_prose_words

    Capsule = apps.get_model("catalog", "Capsule")
    for capsule in Capsule.objects.only("pk", "body_html").iterator():
        words = capsule_prose_words(body_html=capsule.body_html)
        Capsule.objects.filter(pk=capsule.pk).update(words=words, minutes=reading_minutes(words))


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0002_capsule_words_draft_computed_minutes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="capsule",
            name="words",
            field=models.PositiveIntegerField(
                default=0, editable=False, help_text="Words of the rendered prose, code listings left out."
            ),
        ),
        migrations.RunPython(count_prose_words, migrations.RunPython.noop),
    ]
