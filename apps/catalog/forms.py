"""Admin forms for the catalogue: the capsule's outline edited as lines of text, stored as a JSON list."""

from django import forms
from django.contrib.admin.widgets import AdminTextareaWidget
from django.core.exceptions import ValidationError

from apps.catalog.models import Capsule

OUTLINE_MAX_ITEMS = 40
OUTLINE_MAX_LENGTH = 200


class OutlineField(forms.Field):
    """Section titles, one a line: blank lines are dropped, a Markdown-style "- " bullet is forgiven,
    and the stored value is the JSON list of strings that the importer writes (content_files.py)."""

    widget = AdminTextareaWidget(attrs={"rows": 8})
    default_error_messages = {
        "too_many": f"At most {OUTLINE_MAX_ITEMS} sections.",
        "too_long": f"Line %(line)s is longer than {OUTLINE_MAX_LENGTH} characters.",
        "control": "Line %(line)s holds a control character.",
    }

    def prepare_value(self, value):
        # From the database a list; after a refused post the reader's own text, kept as typed.
        if isinstance(value, list):
            return "\n".join(str(item) for item in value)
        return value or ""

    def to_python(self, value) -> list[str]:
        if isinstance(value, list):
            return value
        items = []
        for line in (value or "").splitlines():
            line = line.strip()
            if line.startswith(("- ", "* ")):
                line = line[2:].strip()
            if line:
                items.append(line)
        return items

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        if len(value) > OUTLINE_MAX_ITEMS:
            raise ValidationError(self.error_messages["too_many"], code="too_many")
        for number, item in enumerate(value, start=1):
            if len(item) > OUTLINE_MAX_LENGTH:
                raise ValidationError(self.error_messages["too_long"], code="too_long", params={"line": number})
            if any(ord(char) < 32 or ord(char) == 127 for char in item):
                raise ValidationError(self.error_messages["control"], code="control", params={"line": number})

    def has_changed(self, initial, data) -> bool:
        return (initial or []) != self.to_python(data)


class CapsuleAdminForm(forms.ModelForm):
    outline = OutlineField(
        required=False,
        help_text="Section titles, one a line, in order. Public: shown on the teaser of a locked capsule.",
    )

    class Meta:
        model = Capsule
        fields = (
            "book",
            "part",
            "number",
            "slug",
            "title",
            "badge",
            "access",
            "status",
            "is_draft",
            "summary",
            "outline",
            "body",
        )
