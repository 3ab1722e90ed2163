"""Reader pages. Every view that returns capsule content asks apps.reading.policy.can_read."""

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from apps.accounts.ratelimit import seconds_left_in_window
from apps.catalog import selectors as catalog
from apps.reading import selectors, services
from apps.reading.endings import capsule_endings
from apps.reading.forms import PositionForm, SearchForm
from apps.reading.models import EpubBuild
from apps.reading.policy import can_read, has_full_access
from apps.reading.search import capsule_search, search_rate, search_rate_allows
from config.caching import make_private, public_fragments, public_version, public_when_anonymous

# Pages differ per reader and may hold paid text: never kept by shared caches or the browser's disk cache.
private_page = cache_control(private=True, no_store=True)


@require_GET
@public_when_anonymous
def capsule(request, slug):
    capsule = catalog.capsule_get(slug)
    full_access = has_full_access(request.user)
    progress = selectors.progress_get(request.user, capsule)
    readable = can_read(request.user, capsule)
    if readable and progress is None and request.user.is_authenticated:
        # Opening a capsule is recorded here, not left to the page's first position save: a capsule that fits on
        # the screen is never scrolled, and the save sent as the reader leaves for the progress page raced that
        # page's request, which then said "not opened yet" (issue 29).
        progress = services.progress_open(user=request.user, capsule=capsule)
    context = {
        "capsule": capsule,
        "book": capsule.book,
        "contents": public_fragments(
            "reader-contents", capsule.pk, full_access, render=lambda: _contents(capsule, full_access)
        ),
        "readable": readable,
        "progress": progress if readable else None,
        "public_version": public_version(),  # the template's cached blocks: a revision is seen at once
        "endings": capsule_endings(request, capsule, readable=readable),  # the capsule's exercise (apps.submissions)
    }
    response = render(request, "reading/capsule.html", context)
    if not capsule.is_free:
        # A locked capsule's page depends on who asks (the text, or the offer to subscribe): never shared.
        make_private(response)
    return response


def _contents(capsule, full_access: bool) -> dict[str, str]:
    """The table of contents and the pager: the same for every reader with the same access, and most of a signed-in
    reader's page (two queries and 72 links), so rendered once per version (config.caching.public_fragments)."""
    parts = catalog.book_parts_with_capsules(capsule.book)
    previous, following = catalog.capsule_neighbours(parts, capsule)
    context = {"parts": parts, "capsule": capsule, "full_access": full_access}
    return {
        "nav": render_to_string("reading/_contents_nav.html", context),
        "pager": render_to_string("reading/_pager.html", {"previous": previous, "following": following}),
    }


@require_GET
@private_page
def figure(request, slug, name):
    capsule = catalog.capsule_get(slug)
    if not can_read(request.user, capsule):
        raise Http404("No such figure")
    drawing = capsule.figures.filter(name=name).first()
    if drawing is None:
        raise Http404("No such figure")
    response = HttpResponse(drawing.svg, content_type="image/svg+xml; charset=utf-8")
    # Opened on its own, an SVG is a document: forbid script and anything fetched from elsewhere.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return response


@require_POST
def position_save(request, slug):
    capsule = catalog.capsule_get(slug)
    form = PositionForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"errors": form.errors}, status=400)
    try:
        progress = services.progress_record(user=request.user, capsule=capsule, **form.cleaned_data)
    except services.NotReadable as error:
        return JsonResponse({"error": str(error)}, status=403)
    return JsonResponse({"percent": progress.percent})


@require_POST
@login_required
def complete(request, slug):
    capsule = catalog.capsule_get(slug)
    try:
        progress = services.progress_set_complete(
            user=request.user, capsule=capsule, complete=request.POST.get("complete") != "0"
        )
    except services.NotReadable:
        raise Http404("No such capsule") from None
    if request.htmx:
        return render(request, "reading/_complete_form.html", {"capsule": capsule, "progress": progress})
    return redirect(capsule.get_absolute_url())


@require_GET
@private_page
def search(request):
    """A too-long query is refused with the reason (400); a client past its rate gets the same page,
    saying when to try again (429). Neither reaches the database."""
    form = SearchForm(request.GET)
    if not form.is_valid():
        return render(request, "reading/search.html", {"form": form, "query": "", "hits": []}, status=400)
    query = form.cleaned_data["q"]
    if query and not search_rate_allows(request):
        response = render(
            request,
            "reading/search.html",
            {"form": form, "query": query, "hits": [], "limited": True},
            status=429,
        )
        response["Retry-After"] = str(seconds_left_in_window(search_rate()[1]))
        return response
    return render(
        request,
        "reading/search.html",
        {
            "form": form,
            "query": query,
            "hits": capsule_search(request.user, query),
        },
    )


# --- EPUB ----------------------------------------------------------------------------------------

_EPUB_ROUTES = {EpubBuild.Edition.FULL: "reading:epub-full", EpubBuild.Edition.SAMPLE: "reading:epub-sample"}


def _epub_context(book, edition: str, build: EpubBuild | None = None) -> dict:
    return {"book": book, "edition": edition, "build": build, "download_url": reverse(_EPUB_ROUTES[edition])}


@require_GET
@private_page
def epub_download(request, edition):
    """The file at once when the build for the current content is ready; otherwise a page that
    says it is being prepared (and queues the build, once)."""
    book = catalog.book_get()
    if not selectors.epub_edition_readable(request.user, edition):
        return render(request, "reading/epub_locked.html", _epub_context(book, edition), status=403)
    build = services.epub_request(book=book, edition=edition)
    if build.is_ready:
        try:
            handle = build.path.open("rb")
        except FileNotFoundError:  # replaced by a newer build a moment ago
            pass
        else:
            suffix = "" if edition == EpubBuild.Edition.FULL else "-sample"
            return FileResponse(
                handle, as_attachment=True, filename=f"{book.slug}{suffix}.epub", content_type="application/epub+zip"
            )
    return render(request, "reading/epub_preparing.html", _epub_context(book, edition, build), status=202)


@require_GET
@private_page
def epub_status(request, edition):
    """Polled by the "being prepared" page (htmx). With ?start=1 and the file ready, sends the
    browser to the download, which then starts without leaving the page."""
    if edition not in EpubBuild.Edition.values:
        raise Http404("No such edition")
    book = catalog.book_get()
    if not selectors.epub_edition_readable(request.user, edition):
        return render(request, "reading/epub_locked.html", _epub_context(book, edition), status=403)
    build = services.epub_request(book=book, edition=edition)
    context = _epub_context(book, edition, build)
    if build.is_ready and request.GET.get("start") == "1" and request.htmx:
        return HttpResponseClientRedirect(context["download_url"])
    return render(request, "reading/_epub_status.html", context)
