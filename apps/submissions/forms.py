"""The submit form on an exercise capsule's progress page.

The form only carries the text across: the editor's source, an optional launch plan and an optional
uploaded `.cu` file. Whether a submission is acceptable (access, quota, size, plan) is decided by
`services.submission_create`, whose refusals the view puts back on the fields.
"""

from django import forms
from django_ace import AceWidget

from apps.submissions.models import Submission

# Read at most this much of an upload: enough to tell the service "too large" with the real size
# rule, without holding an arbitrarily large file in memory.
UPLOAD_READ_LIMIT_BYTES = 2 * 1024 * 1024


def _source_limit_kb() -> int:
    return Submission.source_max_bytes() // 1024


class SubmissionForm(forms.Form):
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
        "when filled in, it replaces that comment.",
    )
    upload = forms.FileField(
        label="Or upload a .cu file",
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".cu,text/plain"}),
        help_text="An uploaded file is submitted instead of the editor's text.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["source"].help_text = (
            f"One .cu file with its <code>/* @plan */</code> launch plan, up to {_source_limit_kb()} KB. "
            "In the editor, Tab indents; press Escape, then Tab, to move on."
        )

    def clean_upload(self):
        upload = self.cleaned_data.get("upload")
        if not upload:
            return None
        if not upload.name.lower().endswith(".cu"):
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

    def effective(self) -> tuple[str, str | None, str]:
        """(source, plan or None, filename) to submit: an upload wins over the editor."""
        upload = self.cleaned_data.get("upload")
        source = upload["text"] if upload else self.cleaned_data.get("source", "")
        # Textareas post CRLF line ends; the judge's line numbers and hashes want the file's LF.
        source = source.replace("\r\n", "\n")
        plan = (self.cleaned_data.get("plan") or "").replace("\r\n", "\n")
        return source, (plan if plan.strip() else None), (upload["name"] if upload else "")
