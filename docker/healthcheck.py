"""Container health probe: GET a URL (default http://127.0.0.1:8000/health/) and exit 0 only on 200.

Standard library only (no curl in the slim image). The Host header is the first entry of
ALLOWED_HOSTS, so Django does not answer 400 to a probe addressed to 127.0.0.1; redirects are
not followed, so a 301 (e.g. the SSL redirect) counts as unhealthy instead of hiding a problem.
"""

import os
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/health/"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def probe_host() -> str | None:
    for host in os.environ.get("ALLOWED_HOSTS", "").split(","):
        host = host.strip().lstrip(".")
        if host and host != "*":
            return host
    return None


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else DEFAULT_URL
    request = urllib.request.Request(url, headers={"User-Agent": "docker-healthcheck"})
    host = probe_host()
    if host:
        request.add_header("Host", host)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=float(os.environ.get("HEALTHCHECK_TIMEOUT", "5"))) as response:
            status = response.status
            body = response.read(500).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read(500).decode("utf-8", "replace")
    except OSError as exc:
        print(f"unhealthy: {url}: {exc}", file=sys.stderr)
        return 1
    print(f"{status} {body}")
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
