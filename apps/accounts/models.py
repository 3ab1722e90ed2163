from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from apps.accounts.validators import validate_public_name

# What may give a reader full access, as the entitlement service (apps/subscriptions/services/entitlement.py) stores
# it: the sources of the windows it joined, sorted and joined with "+"; "" for none.
ACCESS_SOURCES = ("", "complimentary", "subscription", "complimentary+subscription")


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
    # The reader's entitlement: when their full access (a subscription, complimentary access) begins and ends, and
    # why, computed from those facts by the subscriptions app (apps/subscriptions/services/entitlement.py), the only
    # writer. Reading it is a comparison with the clock on the user already loaded for the request: no query on any
    # page. `save` never writes these columns (below), no form edits them, and on PostgreSQL a trigger refuses any
    # writer but the service (apps/subscriptions/access_guard.py).
    access_source = models.CharField(
        "full access from", max_length=40, blank=True, editable=False, help_text="Empty: no full access now or later."
    )
    access_from = models.DateTimeField(
        "full access begins", null=True, blank=True, editable=False, help_text="Empty: already."
    )
    access_until = models.DateTimeField(
        "full access ends", null=True, blank=True, editable=False, help_text="Empty: no end (complimentary only)."
    )
    access_reason = models.CharField("why", max_length=500, blank=True, editable=False)
    # One free trial per person: set the first time a subscription of theirs with a trial is seen.
    trial_used_at = models.DateTimeField("trial used", null=True, blank=True, editable=False)

    objects = UserManager()

    EMAIL_FIELD = "email"
    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        ordering = ["email"]
        constraints = [
            models.UniqueConstraint(Lower("email"), name="accounts_user_email_ci_unique"),
            # The entitlement's shape, whoever writes it (ARCHITECTURE.md, "What the database enforces"): a known
            # source, no window without one, a window that ends after it begins, and no end only where a grant
            # without an end date gives it: a subscription's access is always bounded.
            models.CheckConstraint(
                condition=models.Q(access_source__in=ACCESS_SOURCES), name="accounts_user_access_source_known"
            ),
            models.CheckConstraint(
                condition=~models.Q(access_source="") | models.Q(access_from__isnull=True, access_until__isnull=True),
                name="accounts_user_no_source_no_window",
            ),
            models.CheckConstraint(
                condition=models.Q(access_from__isnull=True)
                | models.Q(access_until__isnull=True)
                | models.Q(access_until__gt=models.F("access_from")),
                name="accounts_user_access_ends_after_start",
            ),
            models.CheckConstraint(
                condition=models.Q(access_until__isnull=False)
                | models.Q(access_source="")
                | models.Q(access_source__contains="complimentary"),
                name="accounts_user_only_grants_open_ended",
            ),
        ]

    def __str__(self):
        return self.email

    # Written only by the subscriptions app's entitlement service, with QuerySet.update.
    ENTITLEMENT_FIELDS = frozenset({"access_source", "access_from", "access_until", "access_reason", "trial_used_at"})

    def save(self, *args, update_fields=None, **kwargs):
        """Saves every column but the entitlement's. A user object loaded before a webhook, a grant or a revocation
        changed the reader's access (a password change hashing for half a second, an admin's form) would otherwise
        write the old access back. A new reader is inserted whole: no access yet."""
        if not self._state.adding and not kwargs.get("force_insert"):
            if update_fields is None:
                deferred = self.get_deferred_fields()
                update_fields = [
                    field.attname
                    for field in self._meta.concrete_fields
                    if not field.primary_key and field.attname not in deferred
                ]
            update_fields = [name for name in update_fields if name not in self.ENTITLEMENT_FIELDS]
        super().save(*args, update_fields=update_fields, **kwargs)

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


class AccountDeletionAttempt(models.Model):
    """A wrong confirmation on the deletion form (password or mailed code), counted per reader in the database
    (apps.accounts.deletion): the limit holds whether or not the cache is up. Goes with the account."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    attempted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["user", "attempted_at"], name="accounts_deletion_attempt_idx")]

    def __str__(self):
        return f"deletion attempt {self.attempted_at:%Y-%m-%d %H:%M}"


class AccountDeletionCode(models.Model):
    """The code mailed to a reader without a password to confirm their account's deletion: one at a time (a new one
    replaces it), short-lived, single-use; only its keyed hash is stored."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="+")
    code_hash = models.CharField(max_length=64)
    sent_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    def __str__(self):
        return f"deletion code until {self.expires_at:%Y-%m-%d %H:%M}"
