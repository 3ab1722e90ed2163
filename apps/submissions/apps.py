from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "apps.submissions"
    label = "submissions"
    verbose_name = "Kernel submissions"
