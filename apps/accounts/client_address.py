"""The client's address, for the rate limits (sign-in lockout, sign-up, password reset, search).

Behind the TLS proxy every request's peer (REMOTE_ADDR) is the proxy, so "per address" meant "everyone": seven wrong
passwords locked the owner out and thirty searches answered 429 to all. X-Forwarded-For carries the address each
proxy saw, appended left to right; but anyone can send the header, so it is believed only as far as it was written
by proxies we trust (TRUSTED_PROXIES: addresses or networks). Read from the right: the peer must be a trusted proxy
for the header to count at all, then each entry that is itself a trusted proxy is stepped over, and the first that
is not is the client. A client cannot choose its address: what it wrote stands left of what our proxy appended."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return address.ipv4_mapped or address if isinstance(address, ipaddress.IPv6Address) else address


def client_address(request) -> str:
    """The address of the client that sent `request`, as far as trusted proxies vouch for it."""
    peer = _address(request.META.get("REMOTE_ADDR", "")) or ipaddress.ip_address("0.0.0.0")
    trusted = _networks(tuple(settings.TRUSTED_PROXIES))

    def is_trusted(address) -> bool:
        return any(address in network for network in trusted)

    client = peer
    if is_trusted(peer):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        for entry in reversed(forwarded.split(",")[-settings.TRUSTED_PROXY_HOPS_MAX :]):
            address = _address(entry)
            if address is None:  # garbage a client wrote: the last good address stands
                break
            client = address
            if not is_trusted(address):
                break
    return str(client)
