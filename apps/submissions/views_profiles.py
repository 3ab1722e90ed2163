"""The report's "Profile again" (issue 43): a plain form POST (CSRF-protected, no JavaScript needed) that asks for an
accepted submission to be profiled again, or for the first time when it was accepted without one ("Profile"), and
comes back to the report with a message saying what happened and how many requests are left. Only the submission's
owner may ask; anyone else gets a 404, staff included (the request spends the owner's quota)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from apps.submissions import selectors_profiles, services
from apps.submissions.views import private_page


@require_POST
@login_required
@private_page
def profile_again(request, public_id):
    submission = selectors_profiles.submission_of_owner(request.user, public_id)
    if submission is None:
        raise Http404("No such submission")
    try:
        services.profile_request_create(user=request.user, submission=submission)
    except services.ProfileRequestRefused as refusal:
        messages.error(request, str(refusal))
    else:
        quota = selectors_profiles.profile_request_quota(request.user)
        counted = "" if quota.left is None else f" {quota.left} of your {quota.limit} requests a day left."
        messages.success(
            request,
            "A new profile is queued: it runs when a GPU has no judgement waiting, and this report shows it then."
            + counted,
        )
    return redirect("submissions:detail", public_id=submission.public_id)
