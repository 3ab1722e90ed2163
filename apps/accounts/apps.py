from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    # Not "Accounts": allauth's account app (email addresses) already takes that name in the admin index.
    verbose_name = "Users"

    def ready(self):
        from apps.accounts.ratelimit import install_fail_open_cache

        install_fail_open_cache()
