from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
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


def _github_configured(request) -> bool:
    from allauth.socialaccount.adapter import get_adapter

    return bool(get_adapter().list_apps(request, provider="github"))


def github_login(request):
    """allauth's GitHub sign-in, answering 404 (not a 500 on SocialApp.DoesNotExist) where no keys are configured:
    the site shows no GitHub button then, but the address still exists in allauth's URLs."""
    from allauth.socialaccount.providers.github.views import oauth2_login

    if not _github_configured(request):
        raise Http404("Signing in with GitHub is not available on this site.")
    return oauth2_login(request)


def github_callback(request):
    from allauth.socialaccount.providers.github.views import oauth2_callback

    if not _github_configured(request):
        raise Http404("Signing in with GitHub is not available on this site.")
    return oauth2_callback(request)
