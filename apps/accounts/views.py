from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from apps.reading.policy import has_full_access


@login_required
def profile(request):
    return render(
        request,
        "account/profile.html",
        {
            "email_addresses": request.user.emailaddress_set.all(),
            "full_access": has_full_access(request.user),  # which EPUB to offer
        },
    )
