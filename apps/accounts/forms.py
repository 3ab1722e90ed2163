"""The reader's public name, asked at sign-up (allauth's signup form, through ACCOUNT_SIGNUP_FORM_CLASS)
and changed on the profile page."""

from django import forms

from apps.accounts.validators import PUBLIC_NAME_MAX_CHARS, public_name_clean, validate_public_name

_NAME_HELP = (
    "Shown on your reviews and on leaderboards. Leave it blank to appear as an anonymous handle "
    "such as “Reader 4821”; your email address is never shown."
)


def _public_name_field() -> forms.CharField:
    return forms.CharField(
        label="Public name (optional)",
        required=False,
        # The form's own cap is looser than the rule, so that a long name gets the rule's message.
        max_length=150,
        help_text=_NAME_HELP,
        widget=forms.TextInput(attrs={"autocomplete": "nickname", "maxlength": PUBLIC_NAME_MAX_CHARS}),
    )


class _PublicNameMixin:
    def clean_name(self) -> str:
        name = self.cleaned_data.get("name", "")
        validate_public_name(name)
        return public_name_clean(name)


class SignupNameForm(_PublicNameMixin, forms.Form):
    """allauth builds its signup form on this class and calls `signup` once the user is saved."""

    name = _public_name_field()
    # allauth orders the signup fields by this list (the rest follow).
    field_order = ["email", "name", "password1", "password2"]

    def signup(self, request, user) -> None:
        from apps.accounts.services import user_public_name_set

        user_public_name_set(user=user, name=self.cleaned_data.get("name", ""))


class PublicNameForm(_PublicNameMixin, forms.Form):
    name = _public_name_field()


class AccountDeleteForm(forms.Form):
    """The reader confirms with their password or, without one (GitHub only), the code mailed to their verified
    address (apps.accounts.services); and, where the deletion ends more (`notices`: a running subscription), that
    they know it does."""

    confirmation = forms.CharField(strip=False, max_length=4096, widget=forms.PasswordInput(render_value=False))
    notices_understood = forms.BooleanField(label="I understand, and want my account deleted now.")

    def __init__(self, *args, user, notices: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["confirmation"]
        if user.has_usable_password():
            field.label = "Your password"
            field.widget.attrs["autocomplete"] = "current-password"
        else:
            field.label = "The code we emailed you"
            field.widget = forms.TextInput(
                attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "spellcheck": "false"}
            )
        if not notices:
            del self.fields["notices_understood"]
