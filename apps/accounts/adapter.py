from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.internal.ratelimit import get_ip

from apps.accounts.client_address import client_address
from apps.accounts.mail import email_send_after_commit


class AccountAdapter(DefaultAccountAdapter):
    """Stores every address in lower case, so one reader cannot hold two accounts that
    differ only by letter case."""

    def clean_email(self, email: str) -> str:
        return super().clean_email(email).strip().lower()

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        # allauth's, except that the rendered message is sent by a Celery task after the commit (apps.accounts.mail):
        # sign-up and password reset never fail, nor leave a half-made account, when the SMTP server is down.
        from allauth.core import context as allauth_context
        from django.contrib.sites.shortcuts import get_current_site

        request = allauth_context.request
        message = self.render_mail(
            template_prefix,
            email,
            {"request": request, "email": email, "current_site": get_current_site(request), **context},
        )
        email_send_after_commit(message=message)

    def get_client_ip(self, request) -> str:
        # Every rate limit's address (allauth's, and search's through allauth's get_ip): the client's, not the
        # TLS proxy's, believing X-Forwarded-For only from trusted proxies (apps.accounts.client_address).
        return client_address(request)

    def _get_login_attempts_cache_key(self, request, **credentials) -> str:
        # The "key" of ACCOUNT_RATE_LIMITS["login_failed"] is allauth's account key plus the client's
        # address: wrong passwords sent from elsewhere must not lock the owner out of their account.
        return f"{super()._get_login_attempts_cache_key(request, **credentials)}:{get_ip(request)}"
