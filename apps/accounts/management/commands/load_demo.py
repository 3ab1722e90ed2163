from django.core.management.base import BaseCommand

from apps.accounts.services import DEMO_PASSWORD, demo_accounts_ensure


class Command(BaseCommand):
    help = "Loads the demo data for development: the demo accounts (and, as other apps add it, the demo book)."

    def handle(self, *args, **options):
        accounts = demo_accounts_ensure()
        self.stdout.write("Demo accounts (password: %s):" % DEMO_PASSWORD)
        for account in accounts:
            self.stdout.write(f"  {account.email:<26} {account.role}")
