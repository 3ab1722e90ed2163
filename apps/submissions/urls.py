from django.urls import path

from apps.submissions import views, views_profiles

app_name = "submissions"

urlpatterns = [
    path("capsules/<slug:slug>/submit/", views.submit, name="submit"),
    path("capsules/<slug:slug>/submissions/", views.live, name="live"),
    path("capsules/<slug:slug>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("submissions/<uuid:public_id>/", views.detail, name="detail"),
    path("submissions/<uuid:public_id>/diff/", views.diff, name="diff"),
    path("submissions/<uuid:public_id>/assembly/", views.assembly, name="assembly"),
    path("submissions/<uuid:public_id>/profile.ncu-rep", views.profile_report, name="profile-report"),
    path("submissions/<uuid:public_id>/profile/again/", views_profiles.profile_again, name="profile-again"),
    path("rungs/<slug:problem>/<slug:step>/", views.rung, name="rung"),
    path("staff/judge/", views.queues, name="queues"),
]
