"""Forms parse input and show errors; the rules themselves live in services.review_input_clean,
whose errors the views attach to these forms' fields. The limits come from the models."""

from django import forms

from apps.reviews.models import STARS, Review, ReviewReport


class ReviewForm(forms.Form):
    rating = forms.TypedChoiceField(
        label="Your rating",
        choices=[(n, f"{n} star{'s' if n > 1 else ''}") for n in STARS],
        coerce=int,
        # Five real radio buttons in a fieldset (templates/reviews/_star_input.html): arrow keys
        # move between them, screen readers announce "3 stars, 3 of 5", no JavaScript needed.
        widget=forms.RadioSelect,
        error_messages={"required": "Choose from 1 to 5 stars."},
    )
    title = forms.CharField(label="Title (optional)", required=False, max_length=Review.TITLE_MAX_CHARS)
    text = forms.CharField(
        label="Your review (optional)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="",
    )

    def __init__(self, *args, prefix_id: str = "review", **kwargs):
        kwargs.setdefault("auto_id", f"{prefix_id}-%s")
        super().__init__(*args, **kwargs)
        low, high = Review.TEXT_MIN_CHARS, Review.TEXT_MAX_CHARS
        # maxlength in the browser as a courtesy; the server checks again (and counts the same way).
        self.fields["text"].widget.attrs["maxlength"] = high
        self.fields["text"].help_text = (
            f"{low} to {high:,} characters of plain text; links are shown as text. Leave it empty to give stars only. "
            "Your review shows your profile name."
        )


class ReportForm(forms.Form):
    reason = forms.ChoiceField(label="Why should a moderator look at it?", choices=ReviewReport.Reason.choices)
    note = forms.CharField(label="Anything to add (optional)", required=False, max_length=ReviewReport.NOTE_MAX_CHARS)


class ModerationForm(forms.Form):
    reason = forms.CharField(
        label="Reason",
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Recorded on each review and in its history; readers never see it.",
    )
