"""What apps above reading add at the end of a capsule's page, after its text (apps/submissions: the capsule's
exercise). Reading imports none of them (tests/test_layers.py): each registers a function from its AppConfig.ready.

An ending gets the request, the capsule and whether the visitor may read it, and returns HTML ("" for nothing). It
asks nothing it may not show: a visitor who may not read the capsule gets only what its public page gives everyone.
An anonymous visitor's page is shared (config/caching.py), so what an ending shows them must be the same for every
anonymous visitor and change only with the public version."""

from collections.abc import Callable

from django.utils.safestring import SafeString, mark_safe

CapsuleEnding = Callable[..., str]

_endings: list[CapsuleEnding] = []


def capsule_ending_register(ending: CapsuleEnding) -> None:
    if ending not in _endings:
        _endings.append(ending)


def capsule_endings(request, capsule, *, readable: bool) -> SafeString:
    return mark_safe("".join(str(ending(request, capsule, readable=readable) or "") for ending in _endings))
