"""The report's "Profile again" form (issue 43), as an inclusion tag: what it shows depends on who looks (the owner
only, with their quota), which the report's view leaves to this tag rather than computing for every viewer."""

from django import template
from django.conf import settings

from apps.submissions import selectors_profiles
from apps.submissions.models import Submission

register = template.Library()


@register.inclusion_tag("submissions/_profile_again.html", takes_context=True)
def profile_again(context, submission):
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
        "pending": selectors_profiles.profile_request_pending(submission),
        "quota": selectors_profiles.profile_request_quota(user),
        "csrf_token": context.get("csrf_token"),
    }
