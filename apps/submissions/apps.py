from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "apps.submissions"
    label = "submissions"
    verbose_name = "Kernel submissions"

    def ready(self):
        from apps.catalog.services import book_importer_register
        from apps.submissions.services import exercises_import

        # The exercises declared in capsules' front matter are imported with the book, in its transaction.
        book_importer_register("exercise", exercises_import)

        # A capsule's page ends with its exercise (apps.reading.endings); anonymous pages are kept per public version,
        # which the exercises' table is part of, so a re-imported statement shows at once.
        from apps.reading.endings import capsule_ending_register
        from apps.submissions.models import Exercise
        from apps.submissions.panels import capsule_exercise_ending
        from config.caching import public_version_source

        capsule_ending_register(capsule_exercise_ending)
        public_version_source(
            f"SELECT MAX(updated_at) AS exercise_changed, COUNT(*) AS exercises FROM {Exercise._meta.db_table}"
        )

        from apps.accounts.export import account_export_register
        from apps.submissions.personal_data import submissions_export

        account_export_register("submissions", submissions_export)

        # A profile's .ncu-rep (issue 43) lives on disk under PROFILE_ROOT and goes when its row does.
        from django.db.models.signals import post_delete

        from apps.submissions.models import Profile
        from apps.submissions.services.profile_runs import profile_deleted

        post_delete.connect(profile_deleted, sender=Profile, dispatch_uid="submissions-profile-report")

        # The GPU worker's signals (warm judge, registration, heartbeat) must be connected before a Celery worker
        # starts its pool: the worker sets Django up (and so runs this) before anything else of its start-up.
        import apps.submissions.worker  # noqa: F401
