from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo data of development and tests. It stands on the top floor: it writes through the
    services of every other app, and no app imports it."""

    name = "apps.demo"
    label = "demo"
    verbose_name = "Demo data"
