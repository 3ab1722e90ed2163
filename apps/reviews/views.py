"""Review pages and the landing page's reviews block.

With htmx, a write answers with the re-rendered block (the reader's review or the form with its
errors, the new average, the newest reviews) to swap in place; htmx swaps only 2xx answers, so
those come back as 200 with the errors inside. Without JavaScript the same URLs redirect back to
the landing page, or show the form page with its errors and the right status code.
"""

import contextlib

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods

from apps.catalog import selectors as catalog
from apps.reviews import selectors, services
from apps.reviews.forms import ReportForm, ReviewForm
from apps.reviews.models import Review
from apps.reviews.panels import reviews_block
from config.caching import public_when_anonymous

# Pages carry the visitor's own review, forms and CSRF tokens: never kept by shared caches.
private_page = cache_control(private=True, no_store=True)


def _landing_reviews():
    return reverse("pages:landing") + "#reviews"


def _status_for(error: services.ReviewError) -> int:
    if isinstance(error, services.RateLimited):
        return 429
    if isinstance(error, services.AlreadyReviewed):
        return 409
    if isinstance(error, (services.NotAllowedToReview, services.ReportRefused)):
        return 403
    if isinstance(error, services.ReviewNotFound):
        return 404
    return 400


def _attach(form, error: services.ReviewError) -> None:
    form.add_error(error.field if error.field in form.fields else None, str(error))


def _block(request, book, *, form=None, editing=False, notice=""):
    block = reviews_block(book, request.user, form=form, editing=editing)
    return render(request, "reviews/_block.html", {"reviews": block, "notice": notice})


def _written(request, book, message: str):
    if request.htmx:
        return _block(request, book, notice=message)
    messages.success(request, message)
    return redirect(_landing_reviews())


def _form_page(request, book, form, *, status=200):
    own = selectors.own_review(request.user, book)
    return render(
        request,
        "reviews/review_form.html",
        {
            "book": book,
            "form": form,
            "own": own,
            "eligibility": selectors.review_eligibility(request.user, book).value,
        },
        status=status,
    )


def _refused(request, book, form, error: services.ReviewError):
    _attach(form, error)
    if request.htmx:
        # After "already reviewed" the block opens the existing review for editing, with what
        # the reader just typed still in the form.
        return _block(request, book, form=form, editing=True)
    return _form_page(request, book, form, status=_status_for(error))


def _invalid(request, book, form):
    if request.htmx:
        return _block(request, book, form=form, editing=True)
    return _form_page(request, book, form, status=400)


@require_GET
@public_when_anonymous
def review_list(request):
    book = catalog.book_get()
    sort = request.GET.get("sort", "newest")
    sort = sort if sort in selectors.SORTS else "newest"
    return render(
        request,
        "reviews/review_list.html",
        {
            "book": book,
            "rating": selectors.book_rating(book),
            "readers": selectors.reader_count(book),
            "page": selectors.reviews_page(book, sort=sort, page=request.GET.get("page")),
            "sort": sort,
            "sorts": selectors.SORTS,
        },
    )


@require_GET
@private_page
def review_block(request):
    return _block(request, catalog.book_get())


@login_required
@require_http_methods(["GET", "POST"])
@private_page
def review_create(request):
    book = catalog.book_get()
    if request.method == "GET":
        if selectors.own_review(request.user, book) is not None:
            return redirect("reviews:review-edit")
        return _form_page(request, book, ReviewForm())
    return _save(request, book, services.review_create, "Thank you: your review is posted.")


@login_required
@require_http_methods(["GET", "POST"])
@private_page
def review_edit(request):
    book = catalog.book_get()
    own = selectors.own_review(request.user, book)
    if own is None:
        return redirect("reviews:review-create")
    if request.method == "GET":
        if request.htmx:
            return _block(request, book, editing=True)
        return _form_page(
            request, book, ReviewForm(initial={"rating": own.rating, "title": own.title, "text": own.text})
        )
    return _save(request, book, services.review_update, "Your review is updated.")


def _save(request, book, write, done_message: str):
    """The posted form through `write` (review_create or review_update), and the page or block after it."""
    form = ReviewForm(request.POST)
    if not form.is_valid():
        return _invalid(request, book, form)
    try:
        write(user=request.user, book=book, **form.cleaned_data)
    except services.ReviewError as error:
        return _refused(request, book, form, error)
    return _written(request, book, done_message)


@login_required
@require_http_methods(["GET", "POST"])
@private_page
def review_delete(request):
    book = catalog.book_get()
    if request.method == "GET":
        own = selectors.own_review(request.user, book)
        if own is None:
            return redirect(_landing_reviews())
        return render(request, "reviews/review_delete.html", {"book": book, "own": own})
    # Already gone (a second tab, a double click) is the outcome the reader wanted.
    with contextlib.suppress(services.ReviewNotFound):
        services.review_delete(user=request.user, book=book)
    return _written(request, book, "Your review is deleted.")


def _next_url(request) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return _landing_reviews()


@login_required
@require_http_methods(["GET", "POST"])
@private_page
def review_report(request, pk):
    # Hidden reviews answer 404 like missing ones: nothing tells a visitor one existed.
    review = get_object_or_404(Review.objects.visible().select_related("book", "user"), pk=pk)
    if review.user_id == request.user.pk and request.method == "GET":
        raise Http404("Your own review")
    form = ReportForm(request.POST or None, auto_id=f"report-{review.pk}-%s")
    context = {"review": review, "form": form, "next": _next_url(request)}
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            services.review_report(review=review, reporter=request.user, **form.cleaned_data)
        except services.ReviewError as error:
            _attach(form, error)
            status = _status_for(error)
        else:
            if request.htmx:
                return render(request, "reviews/_report.html", {**context, "reported": True})
            messages.success(request, "Thank you: a moderator will look at this review.")
            return redirect(context["next"])
    elif request.method == "POST":
        status = 400
    if request.htmx:
        return render(request, "reviews/_report.html", {**context, "open": True})
    return render(request, "reviews/review_report.html", context, status=status)
