from django.contrib.auth.decorators import login_required
from django.shortcuts import render


@login_required
def profile(request):
    # The billing and e-reader sections come from their apps' template tags (subscriptions, reading).
    return render(request, "account/profile.html", {"email_addresses": request.user.emailaddress_set.all()})
