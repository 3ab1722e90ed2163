"""A signed-in page rendered once per kind of reader, with each reader's own parts filled in per request.

Rendering was four tenths of a signed-in capsule page's CPU (0.84 of 1.99 ms in one process, bench/page_cost.py),
though nearly all of the page is the same for every reader with the same access: the frame, the capsule, the
contents. A template marks what is a reader's own with `{% personal %}...{% endpersonal %}` (their name, CSRF token,
messages, progress). `render_with_shell` renders the whole template once per *shell key* with those parts left as
holes, keeps that shell in this process's memory, and for each request renders only the holes, with the request's
own context, and puts them in place.

What makes it safe: while a shell renders, the reader and everything personal in the context are stand-ins. The
reader answers only `is_authenticated` and `is_staff` (both in the key); any other use of it, or of the CSRF token,
messages, permissions or a `personal` value named by the view, raises PersonalOutsideHole, so a template that shows
something personal outside a `personal` block fails loudly instead of keeping it for the next reader. The key also
holds the template (as loaded), the public version, the address's scheme and host, the view's name and whatever the
view passes as `vary_on`: everything else the page shows must come from those. Holes render with the request's full
context but outside the template's flow, so they may use only the page's top-level variables, never a loop's or a
`with`'s, and must not sit inside a `{% cache %}` block (that would keep the mark). PAGE_SHELLS=false renders every
page whole, as before.
"""

import logging
import secrets
import threading
from collections import OrderedDict

from django import template
from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.template.context import make_context
from django.template.loader import get_template

from config.caching import public_version

logger = logging.getLogger(__name__)
register = template.Library()

SHELLS_KEPT = 500  # per process: a page kind per capsule and access, a few hundred for a book
_MARK = f"\x00personal-{secrets.token_hex(8)}\x00"  # never in a page: NUL is not valid in HTML text
_RECORDER = "_personal_holes"  # the context key under which a shell's rendering collects its holes
_shells: OrderedDict = OrderedDict()
_lock = threading.Lock()


class PersonalOutsideHole(Exception):
    """A shell's template used a reader's own data outside `{% personal %}`."""


class _Personal:
    """Stands in, while a shell renders, for a value that is the reader's own."""

    def __init__(self, name: str):
        self._name = name

    def _refuse(self, *args):
        raise PersonalOutsideHole(f"{self._name!r} is used outside {{% personal %}} in a page rendered as a shell")

    __getitem__ = __getattr__ = __str__ = __bool__ = __iter__ = __len__ = __eq__ = __html__ = _refuse
    __hash__ = None


class _ShellReader(_Personal):
    """The reader, as far as the shell may know them: signed in, and staff or not."""

    is_authenticated, is_anonymous = True, False

    def __init__(self, is_staff: bool):
        super().__init__("user")
        self.is_staff = is_staff

    def __getitem__(self, name):
        if name in ("is_authenticated", "is_anonymous", "is_staff"):
            raise KeyError(name)  # the template engine then reads the attribute
        self._refuse()


class PersonalNode(template.Node):
    def __init__(self, nodelist):
        self.nodelist = nodelist

    def render(self, context):
        holes = context.get(_RECORDER)
        if holes is None:  # an ordinary rendering: the block is just its content
            return self.nodelist.render(context)
        holes.append(self.nodelist)
        return _MARK


@register.tag
def personal(parser, token):
    if any(command == "cache" for command, _token in parser.command_stack):
        raise template.TemplateSyntaxError("{% personal %} inside {% cache %}: the kept fragment would hold its mark")
    nodelist = parser.parse(("endpersonal",))
    parser.delete_first_token()
    return PersonalNode(nodelist)


def render_with_shell(request, template_name: str, context: dict, *, personal: tuple[str, ...], vary_on: tuple):
    """What render(request, template_name, context) gives, for a signed-in reader through a kept shell. `personal`
    names the context's values that are the reader's own; `vary_on` holds what else the page depends on."""
    user = request.user
    if not (settings.PAGE_SHELLS and user.is_authenticated):
        return render(request, template_name, context)
    loaded = get_template(template_name).template
    key = (
        id(loaded),  # a reloaded template (development) is a new object; the shell holds it, so no other gets its id
        public_version(),
        request.scheme,
        request.get_host(),
        request.resolver_match.view_name if request.resolver_match else None,
        bool(user.is_staff),
        *vary_on,
    )
    shell = _kept(key)
    if shell is None:
        shell = _render_shell(request, loaded, context, personal, user.is_staff)
        if shell is None:
            return render(request, template_name, context)
        _keep(key, shell)
    _template, segments, holes = shell
    full_context = make_context(context, request)
    with full_context.render_context.push_state(loaded), full_context.bind_template(loaded):  # as Template.render
        full_context.template_name = loaded.name
        filled = [hole.render(full_context) for hole in holes]
    return HttpResponse("".join(_interleave(segments, filled)))


def _render_shell(request, loaded, context: dict, personal: tuple[str, ...], is_staff: bool):
    holes: list = []
    stand_ins = {name: _Personal(name) for name in ("csrf_token", "messages", "perms", *personal)}
    shell_context = {**context, **stand_ins, "user": _ShellReader(bool(is_staff)), _RECORDER: holes}
    html = loaded.render(make_context(shell_context, request))
    segments = html.split(_MARK)
    if len(segments) != len(holes) + 1:  # a mark was lost or copied (a filter around a hole): no shell
        logger.warning("page shell of %s has %d marks for %d holes", loaded.name, len(segments) - 1, len(holes))
        return None
    return loaded, tuple(segments), tuple(holes)


def _interleave(segments, filled):
    yield segments[0]
    for piece, segment in zip(filled, segments[1:], strict=True):
        yield piece
        yield segment


def _kept(key):
    with _lock:
        shell = _shells.get(key)
        if shell is not None:
            _shells.move_to_end(key)
        return shell


def _keep(key, shell) -> None:
    with _lock:
        _shells[key] = shell
        while len(_shells) > SHELLS_KEPT:
            _shells.popitem(last=False)


def forget_all() -> None:
    """Drop every kept shell (tests start without them; a new process starts without them anyway)."""
    with _lock:
        _shells.clear()
