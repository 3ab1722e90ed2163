from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        from apps.accounts.ratelimit import install_fail_open_cache

        install_fail_open_cache()
