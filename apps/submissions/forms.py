"""The submit form on an exercise capsule's progress page.

The form only carries the text across: the language (CUDA C++, or Triton where the exercise offers it), the
editor's source, an optional launch plan and an optional uploaded `.cu` or `.py` file, whose suffix must be the
chosen language's. Whether a submission is acceptable (access, quota, size, plan, a language the exercise takes) is
decided by `services.submission_create`, whose refusals the view puts back on the fields.
"""

import json

from django import forms
from django_ace import AceWidget

from apps.submissions.models import Submission
from apps.submissions.selectors import LANGUAGE_EDITOR_MODE, LANGUAGE_SUFFIX

Language = Submission.Language

# Read at most this much of an upload: enough to tell the service "too large" with the real size
# rule, without holding an arbitrarily large file in memory.
UPLOAD_READ_LIMIT_BYTES = 2 * 1024 * 1024


def _source_limit_kb() -> int:
    return Submission.source_max_bytes() // 1024


class SubmissionForm(forms.Form):
    # Every language validates here; the service refuses one the exercise does not offer (a crafted post), with the
    # same message wherever a submission comes from.
    language = forms.ChoiceField(
        label="Language",
        choices=Language.choices,
        required=False,  # a post without it (an older page) is CUDA, as every submission was before Triton
        widget=forms.RadioSelect,
    )
    source = forms.CharField(
        label="Your kernel",
        required=False,  # empty source is refused by the service, with the same message everywhere
        strip=False,  # keep the reader's text exactly, trailing newlines included
        widget=AceWidget(
            mode="c_cpp",
            width="100%",
            height="28rem",
            showprintmargin=False,
            usesofttabs=True,
            tabsize=4,
            toolbar=False,  # its only control is an unlabelled link, which screen readers cannot name
            useworker=False,  # no syntax worker for C++; avoids fetching one
            attrs={
                "rows": 24,
                "class": "code submission-form__source",
                "spellcheck": "false",
                "autocapitalize": "off",
                "autocomplete": "off",
            },
        ),
    )
    plan = forms.CharField(
        label="Launch plan (optional)",
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={
                "rows": 6,
                "class": "code",
                "spellcheck": "false",
                "autocapitalize": "off",
                "placeholder": (
                    '[[launch]]\nkernel = "sgemm_naive"\ngrid = ["cdiv(N, 32)", "cdiv(M, 32)"]\nblock = [32, 32]'
                ),
            }
        ),
        help_text="TOML, as inside the <code>/* @plan */</code> comment. Leave it empty to use the plan in your file; "
        "when filled in, it replaces that comment.",  # __init__ names Triton's PLAN too where Triton is offered
    )
    upload = forms.FileField(
        label="Or upload a .cu file",
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".cu,text/plain"}),
        help_text="An uploaded file is submitted instead of the editor's text.",
    )

    class Media:
        # Both languages' editor modes, whichever the editor opens in: the reader switches in place, and django-ace
        # starts an editor with ace.require, which finds only a mode already loaded. Ace itself first.
        js = ("django_ace/ace/ace.js", "django_ace/ace/mode-c_cpp.js", "django_ace/ace/mode-python.js")

    def __init__(self, *args, languages=(Language.CUDA,), starts=None, **kwargs):
        """`languages`: those the exercise offers (selectors.languages_offered); `starts`: the editor's text in each
        of them (selectors.EditorStart.texts), which the page's script shows when the reader switches."""
        super().__init__(*args, **kwargs)
        self.languages = [str(language) for language in languages]
        self.starts = dict(starts or {})
        choice = self.fields["language"]
        if len(self.languages) > 1:
            choice.widget.choices = [(value, label) for value, label in Language.choices if value in self.languages]
        else:
            choice.widget = forms.HiddenInput()  # nothing to choose: CUDA
        triton = Language.TRITON in self.languages
        # The editor opens in the language chosen: the posted one after a refusal, else where the reader left off.
        self.fields["source"].widget.mode = LANGUAGE_EDITOR_MODE[self.language_shown()]
        self.fields["source"].help_text = (
            f"One .cu file with its <code>/* @plan */</code> launch plan, up to {_source_limit_kb()} KB"
            + (", or one Triton .py file with its <code>PLAN</code> string" if triton else "")
            + ". In the editor, Tab indents; press Escape, then Tab, to move on."
        )
        if triton:
            self.fields["plan"].help_text = (
                "TOML, as inside the <code>/* @plan */</code> comment or a Triton file's <code>PLAN</code> string. "
                "Leave it empty to use the plan in your file; when filled in, it replaces that plan."
            )
            upload = self.fields["upload"]
            upload.label = "Or upload a .cu or .py file"
            upload.widget.attrs["accept"] = ".cu,.py,text/plain,text/x-python"
            upload.help_text = (
                "An uploaded file is submitted instead of the editor's text: .cu for CUDA C++, .py for Triton."
            )

    def starts_json(self) -> str:
        """The editor's text per language, for the page's script (an attribute of the form, escaped as any)."""
        return json.dumps(self.starts) if len(self.starts) > 1 else ""

    def language_shown(self) -> str:
        """The language the form shows: the one posted (when it is offered), else its initial one, else CUDA."""
        chosen = self.data.get("language") if self.is_bound else self.initial.get("language")
        return chosen if chosen in self.languages else Language.CUDA.value

    def clean_language(self) -> str:
        return self.cleaned_data.get("language") or Language.CUDA.value

    def clean(self):
        cleaned = super().clean()
        upload, language = cleaned.get("upload"), cleaned.get("language")
        if upload and language:
            mismatch = _upload_mismatch(upload["name"], language, self.languages)
            if mismatch:
                self.add_error("upload", mismatch)
        return cleaned

    def clean_upload(self):
        upload = self.cleaned_data.get("upload")
        if not upload:
            return None
        if not upload.name.lower().endswith(tuple(LANGUAGE_SUFFIX[language] for language in self.languages)):
            if Language.TRITON in self.languages:
                raise forms.ValidationError(
                    "Upload a CUDA file whose name ends in .cu, or a Triton file ending in .py."
                )
            raise forms.ValidationError("Upload a CUDA source file whose name ends in .cu.")
        data = upload.read(UPLOAD_READ_LIMIT_BYTES + 1)
        if len(data) > UPLOAD_READ_LIMIT_BYTES:
            raise forms.ValidationError(
                f"This file is {upload.size // 1024} KB; "
                f"a submission may have at most {_source_limit_kb()} KB of source."
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise forms.ValidationError(
                "This file is not UTF-8 text; save it as plain UTF-8 and upload it again."
            ) from None
        return {"name": upload.name, "text": text}

    def effective(self) -> tuple[str, str | None, str, str]:
        """(source, plan or None, filename, language) to submit: an upload wins over the editor."""
        upload = self.cleaned_data.get("upload")
        source = upload["text"] if upload else self.cleaned_data.get("source", "")
        # Textareas post CRLF line ends; the judge's line numbers and hashes want the file's LF.
        source = source.replace("\r\n", "\n")
        plan = (self.cleaned_data.get("plan") or "").replace("\r\n", "\n")
        filename = upload["name"] if upload else ""
        return source, (plan if plan.strip() else None), filename, self.cleaned_data["language"]


def _upload_mismatch(name: str, language: str, offered: list[str]) -> str:
    """Why an uploaded file's suffix does not go with the language chosen, in words that say what to do; "" when it
    does. The form comes back with the editor's text and the plan as they were; only the file is to be chosen again
    (a browser never refills a file input)."""
    suffix = next((s for lang, s in LANGUAGE_SUFFIX.items() if name.lower().endswith(s) and lang in offered), None)
    if suffix is None or suffix == LANGUAGE_SUFFIX[language]:
        return ""
    if language == Language.CUDA:
        return (
            f"{name} is a Triton file (.py), but the language chosen is CUDA C++: "
            "choose Triton and add the file again, or upload a CUDA file whose name ends in .cu."
        )
    return (
        f"{name} is a CUDA file (.cu), but the language chosen is Triton: "
        "choose CUDA C++ and add the file again, or upload a Triton file whose name ends in .py."
    )
