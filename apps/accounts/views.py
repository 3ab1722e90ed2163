from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.accounts.forms import PublicNameForm
from apps.accounts.services import user_public_name_set


@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    # The billing and e-reader sections come from their apps' template tags (subscriptions, reading).
    if request.method == "POST":
        form = PublicNameForm(request.POST)
        if form.is_valid():
            user_public_name_set(user=request.user, name=form.cleaned_data["name"])
            messages.success(request, "Your public name is saved.")
            return redirect("accounts:profile")
        status = 400
    else:
        form, status = PublicNameForm(initial={"name": request.user.name}), 200
    context = {"email_addresses": request.user.emailaddress_set.all(), "name_form": form}
    return render(request, "account/profile.html", context, status=status)
