from django.contrib import admin

from apps.reading.models import EpubBuild, ReadingProgress


@admin.register(ReadingProgress)
class ReadingProgressAdmin(admin.ModelAdmin):
    list_display = ("user", "capsule", "furthest_position", "completed_at", "last_read_at")
    list_filter = ("completed_at",)
    search_fields = ("user__email", "capsule__title")
    raw_id_fields = ("user", "capsule")
    readonly_fields = ("started_at", "last_read_at")


@admin.register(EpubBuild)
class EpubBuildAdmin(admin.ModelAdmin):
    """Read-only: builds are made by downloads and the worker; the list shows what is cached and why a build failed."""

    list_display = ("book", "edition", "book_revision", "status", "size_bytes", "built_at", "created_at")
    list_filter = ("edition", "status")
    readonly_fields = [field.name for field in EpubBuild._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
