from django.apps import AppConfig


class PagesConfig(AppConfig):
    """Pages composed from several apps (the landing page, a capsule's progress, "my progress"). It
    stands on the top floor: it reads through the panels and selectors of the apps below, and no app
    imports it."""

    name = "apps.pages"
    label = "pages"
    verbose_name = "Pages"

    def ready(self):
        from apps.pages import legal  # noqa: F401  (registers its system check)
