from django.apps import AppConfig


class ReadingConfig(AppConfig):
    name = "apps.reading"
    label = "reading"
    verbose_name = "Reading"
