"""Moderation: reviews are hidden or restored with a reason (through the services, so the
aggregate follows), never edited or deleted here; readers' reports are listed and linked."""

from django.contrib import admin, messages
from django.db.models import Count, Q
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from apps.reviews import services
from apps.reviews.forms import ModerationForm
from apps.reviews.models import BookRating, Review, ReviewReport


class OpenReportsFilter(admin.SimpleListFilter):
    title = "reports"
    parameter_name = "reports"

    def lookups(self, request, model_admin):
        return (("open", "Open reports"), ("any", "Reported at some time"), ("none", "Never reported"))

    def queryset(self, request, queryset):
        if self.value() == "open":
            return queryset.filter(open_reports__gt=0)
        if self.value() == "any":
            return queryset.filter(all_reports__gt=0)
        if self.value() == "none":
            return queryset.filter(all_reports=0)
        return queryset


class EditedFilter(admin.SimpleListFilter):
    title = "edited"
    parameter_name = "edited"

    def lookups(self, request, model_admin):
        return (("yes", "Edited"), ("no", "Never edited"))

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(edited_at__isnull=self.value() == "no")
        return queryset


class ReviewReportInline(admin.TabularInline):
    model = ReviewReport
    fields = ("created_at", "reporter", "reason", "note", "resolved_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("id", "reviewer", "rating", "excerpt", "status", "open_reports_display", "created_at", "edited_at")
    list_filter = ("status", OpenReportsFilter, "rating", EditedFilter, "book")
    search_fields = ("text", "title", "user__email", "user__name", "moderation_reason")
    list_select_related = ("user", "book")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    fields = (
        "book", "user", "rating", "title", "text", "status", "created_at", "edited_at",
        "moderated_at", "moderated_by", "moderation_reason",
    )  # fmt: skip
    readonly_fields = fields  # readers' words are theirs: moderators hide, they do not rewrite
    inlines = [ReviewReportInline]
    actions = ["hide", "restore"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                open_reports=Count("reports", filter=Q(reports__resolved_at__isnull=True)),
                all_reports=Count("reports"),
            )
        )

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # deleting would bypass the aggregate; hide instead (the reader may delete their own)

    @admin.display(description="reader", ordering="user__email")
    def reviewer(self, obj):
        return f"{obj.user.name} <{obj.user.email}>" if obj.user.name else obj.user.email

    @admin.display(description="review")
    def excerpt(self, obj):
        return Truncator(f"{obj.title} — {obj.text}" if obj.title else obj.text).chars(80) or "(stars only)"

    @admin.display(description="open reports", ordering="open_reports")
    def open_reports_display(self, obj):
        return obj.open_reports

    def _moderate(self, request, queryset, *, action: str, service, title: str):
        """An intermediate page asks for the reason (like the delete confirmation), then the
        service moderates each selected review; the reason also goes into the admin history."""
        form = ModerationForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            done = skipped = 0
            for review in queryset:
                try:
                    service(review=review, moderator=request.user, reason=form.cleaned_data["reason"])
                except services.InvalidTransition:
                    skipped += 1
                    continue
                self.log_change(request, review, f"{title}: {form.cleaned_data['reason']}")
                done += 1
            self.message_user(
                request,
                f"{done} review(s) {action}; {skipped} already were.",
                messages.SUCCESS if done else messages.WARNING,
            )
            return None
        return TemplateResponse(
            request,
            "reviews/admin/moderate.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "action": action,
                "action_name": request.POST.get("action"),
                "form": form,
                "reviews": queryset,
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )

    @admin.action(description="Hide selected reviews (asks for a reason)")
    def hide(self, request, queryset):
        return self._moderate(request, queryset, action="hidden", service=services.review_hide, title="Hide reviews")

    @admin.action(description="Restore selected reviews (asks for a reason)")
    def restore(self, request, queryset):
        return self._moderate(
            request, queryset, action="restored", service=services.review_restore, title="Restore reviews"
        )


@admin.register(ReviewReport)
class ReviewReportAdmin(admin.ModelAdmin):
    list_display = ("created_at", "review_link", "review_status", "reporter", "reason", "note", "resolved_at")
    list_filter = (("resolved_at", admin.EmptyFieldListFilter), "reason", "review__status")
    search_fields = ("note", "reporter__email", "review__text", "review__user__email")
    list_select_related = ("review__user", "reporter")
    readonly_fields = ("review", "reporter", "reason", "note", "created_at", "resolved_at")
    fields = readonly_fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="review")
    def review_link(self, obj):
        url = reverse("admin:reviews_review_change", args=[obj.review_id])
        return format_html('<a href="{}">#{} by {}</a>', url, obj.review_id, obj.review.user.email)

    @admin.display(description="review status", ordering="review__status")
    def review_status(self, obj):
        return obj.review.get_status_display()


@admin.register(BookRating)
class BookRatingAdmin(admin.ModelAdmin):
    list_display = (
        "book",
        "average_display",
        "rating_count",
        "review_count",
        "stars_5",
        "stars_4",
        "stars_3",
        "stars_2",
        "stars_1",
        "updated_at",
    )
    readonly_fields = [f.name for f in BookRating._meta.fields]
    actions = ["recount"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Recount from the reviews")
    def recount(self, request, queryset):
        for rating in queryset.select_related("book"):
            services.book_rating_refresh(book=rating.book)
        self.message_user(request, "Recounted.")
