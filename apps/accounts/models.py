from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from apps.accounts.validators import validate_public_name


class UserManager(BaseUserManager):
    use_in_migrations = True

    def get_by_natural_key(self, email):
        # Sign-in matches the address whatever its case, like allauth does.
        return self.get(email__iexact=email)

    def _create_user(self, email, password, **extra_fields):
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", False)
        extra_fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra_fields)

    def create_superuser(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        if not (extra_fields["is_staff"] and extra_fields["is_superuser"]):
            raise ValueError("A superuser must have is_staff and is_superuser set.")
        return self._create_user(email, password, **extra_fields)


class User(AbstractBaseUser, PermissionsMixin):
    """A reader. The email address is the login; there is no username."""

    email = models.EmailField("email address", max_length=254, unique=True)
    name = models.CharField(
        "public name",
        max_length=150,
        blank=True,
        validators=[validate_public_name],  # caps it well below the column's width
        help_text="Shown on reviews and leaderboards; when blank, an anonymous handle such as “Reader 4821”.",
    )
    is_staff = models.BooleanField("staff status", default=False, help_text="Can sign in to the admin site.")
    is_active = models.BooleanField("active", default=True)
    date_joined = models.DateTimeField("date joined", default=timezone.now)
    # The reader's entitlement: when their full access (a subscription, complimentary access) begins and ends, written
    # by the subscriptions app whenever one of those changes (apps/subscriptions/services/entitlement.py). Reading it
    # is a comparison with the clock on the user already loaded for the request: no query on any page.
    access_source = models.CharField(
        "full access from", max_length=40, blank=True, help_text="Empty: no full access now or later."
    )
    access_from = models.DateTimeField("full access begins", null=True, blank=True, help_text="Empty: already.")
    access_until = models.DateTimeField("full access ends", null=True, blank=True, help_text="Empty: no end known.")

    objects = UserManager()

    EMAIL_FIELD = "email"
    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        ordering = ["email"]
        constraints = [models.UniqueConstraint(Lower("email"), name="accounts_user_email_ci_unique")]

    def __str__(self):
        return self.email

    def clean(self):
        super().clean()
        self.email = self.__class__.objects.normalize_email(self.email).lower()

    @property
    def display_name(self) -> str:
        """What other readers see (apps.accounts.selectors.public_name): never a part of the email."""
        from apps.accounts.selectors import public_name

        return public_name(self)

    def has_entitlement_at(self, moment) -> bool:
        """Whether the stored entitlement covers `moment`: it begins at access_from and ends at access_until
        (exclusive). Staff are the reading policy's concern (apps.reading.policy)."""
        return bool(self.access_source) and (
            (self.access_from is None or self.access_from <= moment)
            and (self.access_until is None or moment < self.access_until)
        )

    def get_full_name(self) -> str:
        return self.name

    def get_short_name(self) -> str:
        return self.display_name
