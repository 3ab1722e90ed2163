from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods

from apps.accounts.deletion import account_deletion_notices
from apps.accounts.export import account_export_chunks
from apps.accounts.forms import AccountDeleteForm, PublicNameForm
from apps.accounts.services import (
    AccountDeletionNotConfirmed,
    AccountDeletionRefused,
    DeletionCodeNotSent,
    account_deletion_code_send,
    user_account_delete,
    user_public_name_set,
)


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


@require_GET
@login_required
@cache_control(private=True, no_store=True)
def data_export(request):
    """Everything of the reader's that the site keeps, as a JSON download written while it is read
    (apps.accounts.export)."""
    response = StreamingHttpResponse(account_export_chunks(request.user), content_type="application/json")
    name = f"kernel-engineering-data-{timezone.now():%Y-%m-%d}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
@cache_control(private=True, no_store=True)
def account_delete(request):
    user, notices = request.user, account_deletion_notices(request.user)
    if request.method == "POST" and "send-code" in request.POST:
        try:
            address = account_deletion_code_send(user=user)
            messages.success(request, f"We have emailed a code to {address}: enter it below.")
        except DeletionCodeNotSent as error:
            messages.error(request, str(error))
        return redirect("accounts:delete")
    form = AccountDeleteForm(request.POST or None, user=user, notices=notices)
    status, refusals = 200, []
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                user_account_delete(user=user, confirmation=form.cleaned_data["confirmation"])
            except AccountDeletionNotConfirmed as error:
                form.add_error("confirmation", str(error))
            except AccountDeletionRefused as error:
                refusals = error.reasons
            else:
                logout(request)
                messages.success(request, "Your account and everything of yours on this site have been deleted.")
                return redirect("pages:landing")
    context = {"form": form, "notices": notices, "refusals": refusals, "refund_days": settings.REFUND_WINDOW_DAYS}
    return render(request, "account/delete.html", context, status=status)


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
