from django.urls import path

from apps.subscriptions import views

app_name = "subscriptions"

urlpatterns = [
    path("pricing/", views.pricing, name="pricing"),
    path("billing/checkout/", views.checkout, name="checkout"),
    path("billing/success/", views.checkout_success, name="checkout-success"),
    path("billing/cancel/", views.checkout_cancel, name="checkout-cancel"),
    path("billing/portal/", views.portal, name="portal"),
    path("billing/status/", views.access_status, name="access-status"),
    path("stripe/webhook/", views.stripe_webhook, name="stripe-webhook"),
    # Test mode only (404 otherwise): the local stand-ins for Stripe's hosted Checkout and Portal pages.
    path("billing/test-mode/checkout/<str:session_id>/", views.test_mode_checkout, name="test-mode-checkout"),
    path("billing/test-mode/portal/<str:session_id>/", views.test_mode_portal, name="test-mode-portal"),
]
