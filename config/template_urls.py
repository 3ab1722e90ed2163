"""`{% url %}` as Django's, remembering the addresses it has reversed (a template builtin: settings.TEMPLATES).

Reversing a name walks the URLconf's patterns on every call: six of them were a tenth of a signed-in capsule page's
time in one process (bench/page_cost.py), for addresses that only change with the code. An address depends on the
name, its arguments, the current app, the script prefix and the URLconf, so all of them are the key; only string and
integer arguments are remembered (anything else is reversed each time, as its text might change). A name that does
not reverse raises or gives "" as Django's tag does, and is never remembered.
"""

from functools import lru_cache

from django import template
from django.template.defaulttags import URLNode
from django.template.defaulttags import url as django_url
from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString

register = template.Library()

REMEMBERED = 4096  # addresses per process: the site's names times its capsules, with room to spare
_REMEMBERED_TYPES = (str, SafeString, int)  # a template's quoted text is a SafeString


class RememberedURLNode(URLNode):
    def render(self, context):
        args = tuple(arg.resolve(context) for arg in self.args)
        kwargs = tuple(sorted((name, value.resolve(context)) for name, value in self.kwargs.items()))
        view_name = self.view_name.resolve(context)
        try:  # as Django's tag
            current_app = context.request.current_app
        except AttributeError:
            try:
                current_app = context.request.resolver_match.namespace
            except AttributeError:
                current_app = None
        try:
            if all(type(value) in _REMEMBERED_TYPES for value in (*args, *(value for _, value in kwargs))):
                url = _reverse(view_name, args, kwargs, current_app, get_script_prefix(), get_urlconf())
            else:
                url = reverse(view_name, args=args, kwargs=dict(kwargs), current_app=current_app)
        except NoReverseMatch:
            if self.asvar is None:
                raise
            url = ""
        if self.asvar:
            context[self.asvar] = url
            return ""
        return conditional_escape(url) if context.autoescape else url


@lru_cache(maxsize=REMEMBERED)
def _reverse(view_name, args, kwargs, current_app, script_prefix, urlconf) -> str:
    # script_prefix and urlconf are read by reverse() itself; they are parameters only to be part of the key.
    return reverse(view_name, urlconf=urlconf, args=args, kwargs=dict(kwargs), current_app=current_app)


@register.tag
def url(parser, token):
    node = django_url(parser, token)
    return RememberedURLNode(node.view_name, node.args, node.kwargs, node.asvar)
