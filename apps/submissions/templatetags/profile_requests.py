"""The report's "Profile again" form (issue 43), as an inclusion tag: what it shows depends on who looks (the owner
only, with their quota), which the report's view leaves to this tag rather than computing for every viewer.
`profile_missing` is the same form for an accepted submission that has no profile to show (judged before profiles
were made, or while they were off), in a section of its own since the profile's is not drawn."""

from django import template
from django.conf import settings

from apps.submissions import selectors_profiles
from apps.submissions.models import Submission

register = template.Library()


def _request_form(context, submission, *, label: str) -> dict:
    """The form's context for the owner of an accepted submission while profiles are on; {"shown": False} for
    anyone else (the view would answer them 404) and when profiling is off (the request would be refused)."""
    user = context["request"].user
    shown = (
        settings.PROFILES_ENABLED
        and user.is_authenticated
        and submission.user_id == user.pk
        and submission.status == Submission.Status.PASSED
    )
    if not shown:
        return {"shown": False}
    return {
        "shown": True,
        "submission": submission,
        "label": label,
        "pending": selectors_profiles.profile_request_pending(submission),
        "quota": selectors_profiles.profile_request_quota(user),
        "csrf_token": context.get("csrf_token"),
    }


@register.inclusion_tag("submissions/_profile_again.html", takes_context=True)
def profile_again(context, submission):
    return _request_form(context, submission, label="Profile again")


@register.inclusion_tag("submissions/_profile_missing.html", takes_context=True)
def profile_missing(context, submission):
    return _request_form(context, submission, label="Profile")
