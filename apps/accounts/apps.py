from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    # Not "Accounts": allauth's account app (email addresses) already takes that name in the admin index.
    verbose_name = "Users"

    def ready(self):
        from django.apps import apps
        from django.db.models.signals import post_migrate

        from apps.accounts.ratelimit import install_fail_open_cache
        from apps.accounts.sites import site_sync_from_settings

        install_fail_open_cache()
        # After django.contrib.sites has created its row (its own post_migrate receiver, connected earlier).
        post_migrate.connect(
            site_sync_from_settings, sender=apps.get_app_config("sites"), dispatch_uid="accounts.site_sync"
        )
