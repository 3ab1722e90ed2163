"""config.template_urls: the site's `{% url %}` remembers addresses, and gives what Django's reverse gives whatever
changes between two renderings (arguments, script prefix, URLconf)."""

import pytest
from django.template import Context, RequestContext, Template
from django.test import RequestFactory
from django.urls import NoReverseMatch, clear_script_prefix, reverse, set_script_prefix, set_urlconf


def render(source: str, **context) -> str:
    return Template(source).render(Context(context))


def test_the_site_templates_use_the_remembering_tag():
    from config.template_urls import RememberedURLNode

    nodes = Template("{% url 'reading:complete' 'a' %}").nodelist
    assert isinstance(nodes[0], RememberedURLNode)


def test_each_argument_gives_its_own_address():
    source = "{% url 'reading:complete' slug %}"
    for slug in ("first-capsule", "second-capsule", "first-capsule"):
        assert render(source, slug=slug) == reverse("reading:complete", args=[slug])
    assert render("{% url 'reading:capsule' slug=slug %}", slug="x") == "/capsules/x/"


def test_a_new_script_prefix_is_seen():
    source = "{% url 'reading:complete' 'roofline' %}"
    assert render(source) == "/capsules/roofline/complete/"
    set_script_prefix("/book/")
    try:
        assert render(source) == "/book/capsules/roofline/complete/"
    finally:
        clear_script_prefix()
    assert render(source) == "/capsules/roofline/complete/"


def test_a_request_urlconf_is_seen():
    source = "{% url 'reading:complete' 'roofline' %}"
    assert render(source) == "/capsules/roofline/complete/"
    with pytest.raises(NoReverseMatch):
        render("{% url 'only-here' %}")
    set_urlconf("tests.config.other_urls")
    try:
        assert render(source) == "/other/capsules/roofline/complete/"
        assert render("{% url 'only-here' %}") == "/elsewhere/"
        request = RequestFactory().get("/")
        request.current_app = "second"
        assert Template(source).render(RequestContext(request)) == "/second/capsules/roofline/complete/"
    finally:
        set_urlconf(None)
    assert render(source) == "/capsules/roofline/complete/"


def test_objects_are_reversed_each_time_as_their_text_may_change():
    class Slug:
        text = "before"

        def __str__(self):
            return self.text

    slug = Slug()
    source = "{% url 'reading:complete' slug %}"
    assert render(source, slug=slug) == "/capsules/before/complete/"
    slug.text = "after"
    assert render(source, slug=slug) == "/capsules/after/complete/"


def test_a_name_that_does_not_reverse_fails_as_with_django():
    with pytest.raises(NoReverseMatch):
        render("{% url 'reading:no-such-page' %}")
    assert render("{% url 'reading:no-such-page' as missing %}[{{ missing }}]") == "[]"
    assert render("{% url 'reading:complete' 'x' as there %}[{{ there }}]") == "[/capsules/x/complete/]"


def test_the_address_is_escaped_in_html():
    assert render("{% url 'reading:search' %}?q={{ q }}", q="<b>") == "/search/?q=&lt;b&gt;"
    assert render("{% url 'reading:figure' 'x' name %}", name="a&b") == "/capsules/x/figures/a&amp;b"
    assert render("{% autoescape off %}{% url 'reading:figure' 'x' name %}{% endautoescape %}", name="a&b") == (
        "/capsules/x/figures/a&b"
    )
