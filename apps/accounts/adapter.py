from allauth.account.adapter import DefaultAccountAdapter


class AccountAdapter(DefaultAccountAdapter):
    """Stores every address in lower case, so one reader cannot hold two accounts that
    differ only by letter case."""

    def clean_email(self, email: str) -> str:
        return super().clean_email(email).strip().lower()
