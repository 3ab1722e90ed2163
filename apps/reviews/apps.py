from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "apps.reviews"
    label = "reviews"
    verbose_name = "Ratings and reviews"

    def ready(self):
        from apps.accounts.deletion import account_content_register, users_deleting
        from apps.reviews.models import Review

        # A reader's reviews go with their account, and out of the books' ratings in the same transaction.
        account_content_register(Review)
        users_deleting.connect(_users_deleting, dispatch_uid="reviews.users_deleting")

        from apps.accounts.export import account_export_register
        from apps.reviews.personal_data import reviews_export

        account_export_register("reviews", reviews_export)

        from apps.reviews.selectors import PUBLIC_VERSION_SQL
        from config.caching import public_version_source

        # The landing and reviews pages show reviews: their cached copies follow them (config/caching.py).
        public_version_source(PUBLIC_VERSION_SQL)


def _users_deleting(sender, *, users, **kwargs):
    from apps.reviews.services import user_reviews_delete

    user_reviews_delete(users=users)
