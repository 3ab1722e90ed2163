from django.contrib import admin
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from apps.catalog.models import Book, Capsule, Figure, Part
from apps.catalog.services import capsule_save


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
    list_display = ("number", "title", "part", "badge", "access", "status", "minutes", "revision", "updated_at")
    list_display_links = ("number", "title")
    list_filter = ("access", "status", "part")
    search_fields = ("title", "summary", "slug")
    readonly_fields = ("revision", "updated_at", "preview")
    fieldsets = (
        (None, {"fields": ("book", "part", "number", "slug", "title", "badge", "minutes", "access", "status")}),
        ("Public teaser", {"fields": ("summary", "outline")}),
        (
            "Text",
            {
                "fields": ("body", "preview"),
                "description": (
                    "Markdown as in content/README.md. Saving re-renders the preview; "
                    "a re-import from content/ overwrites edits made here."
                ),
            },
        ),
        ("Revision", {"fields": ("revision", "updated_at")}),
    )
    inlines = [FigureInline]

    @admin.display(description="Rendered preview (as saved)")
    def preview(self, capsule):
        # body_html was sanitised by the pipeline (nh3 allowlist) when it was rendered.
        return format_html('<div class="prose capsule-body admin-preview">{}</div>', mark_safe(capsule.body_html))

    def save_model(self, request, obj, form, change):
        capsule_save(capsule=obj)


@admin.register(Figure)
class FigureAdmin(admin.ModelAdmin):
    list_display = ("capsule", "number", "name")
    search_fields = ("name", "caption", "capsule__title")
    readonly_fields = ("capsule", "name", "number")
