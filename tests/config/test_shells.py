"""config.shells: `{% personal %}` and the shell a signed-in page is rendered from. The capsule page's own tests are
tests/reading/test_page_shells.py; these hold the rules that keep a shell from carrying one reader's data to another."""

import pytest
from django.template import Context, Template, TemplateSyntaxError
from django.test import RequestFactory, override_settings

from config import shells
from config.shells import PersonalOutsideHole, render_with_shell
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _templates(**sources):
    return override_settings(
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "OPTIONS": {
                    # cached, as in production: the same template object for every request
                    "loaders": [
                        ("django.template.loaders.cached.Loader", [("django.template.loaders.locmem.Loader", sources)])
                    ],
                    "builtins": ["config.shells"],
                    "context_processors": [
                        "django.template.context_processors.csrf",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                    ],
                },
            }
        ]
    )


@pytest.fixture
def reader_request():
    request = RequestFactory().get("/page/")
    request.user = UserFactory(name="Reader One")
    request.resolver_match = None
    return request


def _page(request, **context) -> str:
    return render_with_shell(request, "page.html", context, personal=("secret",), vary_on=()).content.decode()


def test_personal_renders_its_content_in_an_ordinary_rendering():
    assert Template("[{% personal %}{{ name }}{% endpersonal %}]").render(Context({"name": "Ann"})) == "[Ann]"


def test_personal_inside_a_cache_block_does_not_compile():
    with pytest.raises(TemplateSyntaxError, match="inside"):
        Template("{% load cache %}{% cache 60 'x' %}{% personal %}{{ user.email }}{% endpersonal %}{% endcache %}")


def test_holes_are_filled_for_each_request(reader_request):
    source = "<p>{% personal %}{{ user.name }}: {{ secret }}{% endpersonal %}</p>"
    with _templates(**{"page.html": source}):
        assert _page(reader_request, secret="one") == "<p>Reader One: one</p>"
        reader_request.user = UserFactory(name="Reader Two")
        assert _page(reader_request, secret="two") == "<p>Reader Two: two</p>"
    assert len(shells._shells) == 1


@pytest.mark.parametrize(
    "outside",
    [
        "{{ user.email }}",
        "{{ user }}",
        "{% if user.name %}x{% endif %}",
        "{% csrf_token %}",
        "{{ csrf_token }}",
        "{% for message in messages %}{{ message }}{% endfor %}",
        "{{ secret }}",
        "{% if secret %}x{% endif %}",
        "{{ secret.anything }}",
    ],
)
def test_the_reader_s_own_data_outside_a_hole_is_refused(reader_request, outside):
    with _templates(**{"page.html": f"<p>{outside}</p>"}), pytest.raises(PersonalOutsideHole):
        _page(reader_request, secret="mine")
    assert shells._shells == {}


def test_what_the_shell_is_keyed_by_may_be_used_outside_holes(reader_request):
    source = "{% if user.is_authenticated %}in{% endif %}{% if user.is_staff %} staff{% endif %}"
    with _templates(**{"page.html": source}):
        assert _page(reader_request) == "in"
        reader_request.user = UserFactory(is_staff=True)
        assert _page(reader_request) == "in staff"
    assert len(shells._shells) == 2


def test_a_hole_whose_mark_is_changed_falls_back_to_an_ordinary_rendering(reader_request):
    source = "{% filter upper %}{% personal %}{{ user.name }}{% endpersonal %}{% endfilter %}"
    with _templates(**{"page.html": source}):
        assert _page(reader_request) == "READER ONE"
    assert shells._shells == {}


def test_an_anonymous_visitor_gets_an_ordinary_rendering():
    from django.contrib.auth.models import AnonymousUser

    request = RequestFactory().get("/page/")
    request.user = AnonymousUser()
    with _templates(**{"page.html": "{% personal %}{{ user.is_anonymous }}{% endpersonal %}"}):
        assert _page(request) == "True"
    assert shells._shells == {}
