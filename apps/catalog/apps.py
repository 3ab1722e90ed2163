from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "apps.catalog"
    label = "catalog"
    verbose_name = "Catalogue"

    def ready(self):
        from apps.catalog.selectors import PUBLIC_VERSION_SQL
        from config.caching import public_version_source

        # Anonymous pages are cached per version of what they show (config/caching.py).
        public_version_source(PUBLIC_VERSION_SQL)
