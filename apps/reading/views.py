"""Reader pages. Every view that returns capsule content asks apps.reading.policy.can_read."""
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST

from apps.catalog import selectors as catalog
from apps.reading import selectors, services
from apps.reading.forms import PositionForm, SearchForm
from apps.reading.policy import can_read, has_full_access

# Pages differ per reader and may hold paid text: never kept by shared caches or the browser's disk cache.
private_page = cache_control(private=True, no_store=True)


@require_GET
@private_page
def capsule(request, slug):
    capsule = catalog.capsule_get(slug)
    parts = catalog.book_parts_with_capsules(capsule.book)
    previous, following = catalog.capsule_neighbours(parts, capsule)
    readable = can_read(request.user, capsule)
    return render(request, "reading/capsule.html", {
        "capsule": capsule,
        "book": capsule.book,
        "parts": parts,
        "previous": previous,
        "following": following,
        "readable": readable,
        "progress": selectors.progress_get(request.user, capsule) if readable else None,
    })


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
        progress = services.progress_set_complete(user=request.user, capsule=capsule, complete=request.POST.get("complete") != "0")
    except services.NotReadable:
        raise Http404("No such capsule") from None
    if request.htmx:
        return render(request, "reading/_complete_form.html", {"capsule": capsule, "progress": progress})
    return redirect(capsule.get_absolute_url())


@require_GET
@login_required
@private_page
def capsule_progress(request, slug):
    capsule = catalog.capsule_get(slug)
    return render(request, "reading/capsule_progress.html", {
        "capsule": capsule,
        "readable": can_read(request.user, capsule),
        "progress": selectors.progress_get(request.user, capsule),
    })


@require_GET
@login_required
@private_page
def my_progress(request):
    book = catalog.book_get()
    parts = catalog.book_parts_with_capsules(book)
    progress = selectors.progress_by_capsule(request.user, book)
    return render(request, "reading/my_progress.html", {
        "book": book,
        "parts": parts,
        "progress": progress,
        "summary": selectors.progress_summary(parts, progress),
        "continue_capsule": selectors.continue_reading(parts, progress),
        "full_access": has_full_access(request.user),
    })


@require_GET
@private_page
def search(request):
    form = SearchForm(request.GET)
    query = form.cleaned_data["q"] if form.is_valid() else ""
    return render(request, "reading/search.html", {
        "form": form,
        "query": query,
        "hits": selectors.capsule_search(request.user, query),
    })
