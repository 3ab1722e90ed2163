from django import forms


class PositionForm(forms.Form):
    position = forms.FloatField(min_value=0.0, max_value=1.0)
    heading = forms.CharField(max_length=200, required=False)


class SearchForm(forms.Form):
    q = forms.CharField(label="Search the book", max_length=200, required=False)
