from django.urls import path

from apps.reviews import views

app_name = "reviews"

urlpatterns = [
    path("reviews/", views.review_list, name="review-list"),
    path("reviews/block/", views.review_block, name="review-block"),
    path("reviews/new/", views.review_create, name="review-create"),
    path("reviews/mine/edit/", views.review_edit, name="review-edit"),
    path("reviews/mine/delete/", views.review_delete, name="review-delete"),
    path("reviews/<int:pk>/report/", views.review_report, name="review-report"),
]
