from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from apps.demo.data import (
    DEMO_PASSWORD,
    demo_accounts_ensure,
    demo_subscriber_ensure,
    reference_results_load_demo,
    reviews_demo_ensure,
)


class Command(BaseCommand):
    help = "Loads the demo data for development: the demo book from content/ and the demo accounts."

    def handle(self, *args, **options):
        if not getattr(settings, "DEMO_DATA_ALLOWED", False):
            raise CommandError("Demo data may only be loaded where DEMO_DATA_ALLOWED is set (development and tests).")
        call_command("import_book", settings.DEMO_BOOK_DIR, stdout=self.stdout)
        accounts = demo_accounts_ensure()
        demo_subscriber_ensure()  # full access for subscriber@example.com (complimentary, reason "demo")
        reference_results_load_demo()  # the reference ladder as measured on an H200, for the progress pages
        reviews_demo_ensure()  # the original page's five reviews, by demo readers who opened a capsule
        self.stdout.write(f"Demo accounts (password: {DEMO_PASSWORD}):")
        for account in accounts:
            self.stdout.write(f"  {account.email:<26} {account.role}")
