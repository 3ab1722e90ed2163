from django.contrib import admin

from apps.reading.models import ReadingProgress


@admin.register(ReadingProgress)
class ReadingProgressAdmin(admin.ModelAdmin):
    list_display = ("user", "capsule", "furthest_position", "completed_at", "last_read_at")
    list_filter = ("completed_at",)
    search_fields = ("user__email", "capsule__title")
    raw_id_fields = ("user", "capsule")
    readonly_fields = ("started_at", "last_read_at")
