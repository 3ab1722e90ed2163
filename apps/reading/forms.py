from django import forms

from apps.reading.search import QUERY_MAX_CHARS


class PositionForm(forms.Form):
    position = forms.FloatField(min_value=0.0, max_value=1.0)
    heading = forms.CharField(max_length=200, required=False)


class SearchForm(forms.Form):
    q = forms.CharField(
        label="Search the book",
        max_length=QUERY_MAX_CHARS,
        required=False,
        error_messages={
            "max_length": (
                "Searches are limited to %(limit_value)d characters and yours has %(show_value)d: "
                "shorten it to the few words that matter and search again."
            )
        },
    )
