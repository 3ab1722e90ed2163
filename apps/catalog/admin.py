from django.contrib import admin
from django.http import HttpResponse, HttpResponseNotAllowed
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import escape, format_html

from apps.catalog.forms import CapsuleAdminForm
from apps.catalog.markdown import ContentError, render_markdown
from apps.catalog.models import Book, Capsule, Figure, Part
from apps.catalog.services import book_measurements, capsule_save

# The most Markdown the preview renders in one request: far above the longest capsule, a bound on the work.
PREVIEW_MAX_CHARS = 500_000


class PartInline(admin.TabularInline):
    model = Part
    extra = 0
    fields = ("number", "slug", "title", "description")


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ("title", "author", "revision", "updated_at")
    readonly_fields = ("revision", "updated_at")
    inlines = [PartInline]


class FigureInline(admin.TabularInline):
    model = Figure
    extra = 0
    fields = ("number", "name", "caption")
    readonly_fields = ("number", "name", "caption")
    can_delete = False
    show_change_link = True


@admin.register(Capsule)
class CapsuleAdmin(admin.ModelAdmin):
    list_display = (
        "number",
        "title",
        "part",
        "badge",
        "access",
        "status",
        "is_draft",
        "minutes",
        "revision",
        "updated_at",
    )
    list_display_links = ("number", "title")
    list_filter = ("access", "status", "is_draft", "part")
    search_fields = ("title", "summary", "slug")
    readonly_fields = ("words", "minutes", "revision", "updated_at", "preview")
    form = CapsuleAdminForm
    fieldsets = (
        (None, {"fields": ("book", "part", "number", "slug", "title", "badge", "access", "status", "is_draft")}),
        ("Public teaser", {"fields": ("summary", "outline")}),
        (
            "Text",
            {
                "fields": ("body", "preview"),
                "description": (
                    "Markdown as in content/README.md. The preview follows your typing, rendered by the site's "
                    "own pipeline in the reader's styles; nothing is saved until you save. A re-import keeps an "
                    "edit made here while the capsule's file in content/ is unchanged since the last import; once "
                    "that file changes, the next import replaces the edit with the file's text."
                ),
            },
        ),
        ("Revision", {"fields": ("words", "minutes", "revision", "updated_at")}),
    )
    inlines = [FigureInline]

    class Media:
        js = ("js/admin_preview.js",)
        css = {"all": ("css/admin_preview.css",)}

    def get_urls(self):
        # admin_view: staff only (others go to the admin's sign-in), and CSRF-checked like every admin post.
        preview = path("preview/", self.admin_site.admin_view(self.preview_view), name="catalog_capsule_preview")
        return [preview, *super().get_urls()]

    def preview_view(self, request):
        """The posted Markdown rendered as the reader will see it: a whole document for the preview iframe."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_view_or_change_permission(request):
            return HttpResponse("Forbidden", status=403, content_type="text/plain")
        source = request.POST.get("body", "")[:PREVIEW_MAX_CHARS]
        slug = request.POST.get("slug", "") or "preview"
        return HttpResponse(preview_document(source, slug=slug, book=_preview_book(request.POST.get("book"), slug)))

    @admin.display(description="Preview")
    def preview(self, capsule):
        url = reverse("admin:catalog_capsule_preview")
        return format_html(
            '<iframe class="capsule-preview" title="Preview of the capsule text" sandbox="allow-same-origin" '
            'data-preview-url="{}" srcdoc="{}"></iframe>'
            '<p class="capsule-preview__status" role="status" aria-live="polite"></p>',
            url,
            # escape(), not format_html's conditional escape: the document is a SafeString, and unescaped it
            # would end the attribute at its first quote.
            escape(preview_document(capsule.body, slug=capsule.slug or "preview", book=capsule.book))
            if capsule.pk
            else "",
        )

    def save_model(self, request, obj, form, change):
        capsule_save(capsule=obj)


@admin.register(Figure)
class FigureAdmin(admin.ModelAdmin):
    list_display = ("capsule", "number", "name")
    search_fields = ("name", "caption", "capsule__title")
    readonly_fields = ("capsule", "name", "number")


def _preview_book(book_id: str | None, slug: str) -> Book | None:
    """The book whose measured figures fill the preview's {{m:KEY}} references: the posted one, else the book of
    the capsule with that slug, else the first book."""
    book = Book.objects.filter(pk=book_id).first() if (book_id or "").isdigit() else None
    capsule = None if book else Capsule.objects.filter(slug=slug).select_related("book").first()
    return book or (capsule.book if capsule else Book.objects.order_by("pk").first())


def preview_document(source: str, *, slug: str, book: Book | None = None) -> str:
    """A capsule body as a standalone page in the site's reader styles; a Markdown error is shown, not raised.

    Rendered by the same pipeline as a save (markdown-it, MathML, Pygments, nh3), so what the preview
    shows is what readers will get."""
    error = None
    html = ""
    try:
        html = render_markdown(
            source,
            figure_url=lambda name: reverse("reading:figure", kwargs={"slug": slug, "name": name}),
            measurements=book_measurements(book) if book else None,
            figure_svg=dict(Figure.objects.filter(capsule__slug=slug).values_list("name", "svg")).get,
        ).html
    except ContentError as problem:
        error = problem
    return render_to_string("admin/catalog/capsule_preview.html", {"body_html": html, "error": error})
