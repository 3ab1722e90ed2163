import factory
from allauth.account.models import EmailAddress

from apps.accounts.models import User

PASSWORD = "correct-horse-battery-42"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"reader{n}@example.org")
    name = factory.Faker("name")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def verified(user, create, extracted, **kwargs):
        """verified=True (the default) gives the user a verified primary address, as after
        clicking the link in the confirmation email."""
        user.save()
        if create and extracted is not False:
            EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
