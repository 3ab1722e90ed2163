"""The simulated readers of the load benchmark (bench/load.py), made on the server's side.

Run by bench/load.py as `python -m bench.readers COUNT` under the same settings and secret as the server under test,
after `load_demo`; prints JSON on stdout: the pages to ask for and one signed-in session cookie per account. Readers are
returning visitors who signed in earlier: their sessions are made here with Django's own login code, so that the run
measures reading, not 200 password hashes at once (the benchmark signs one reader in through the real form). The
accounts have no usable password, so nothing here leaves a way in on a real site.

Of every ten readers, 4 anonymous, 3 signed in without a subscription, 3 subscribers (complimentary access).
"""

import json
import sys

import django

KINDS = ("anonymous",) * 4 + ("reader",) * 3 + ("subscriber",) * 3


def main(count: int) -> dict:
    django.setup()
    from allauth.account.models import EmailAddress
    from django.conf import settings
    from django.db import transaction
    from django.test import Client

    from apps.accounts.models import User
    from apps.catalog.models import Capsule
    from apps.subscriptions.services.complimentary import complimentary_access_grant

    capsules = list(Capsule.objects.published().select_related("exercise").order_by("number"))
    free = [capsule.slug for capsule in capsules if capsule.is_free]
    locked = [capsule.slug for capsule in capsules if not capsule.is_free]
    exercises = [capsule.slug for capsule in capsules if hasattr(capsule, "exercise")]
    readers = []
    with transaction.atomic():
        for number in range(count):
            kind = KINDS[number % len(KINDS)]
            if kind == "anonymous":
                readers.append({"kind": kind, "session": None})
                continue
            user = User.objects.create_user(f"bench-{number}@example.com", name=f"Bench reader {number}")
            EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
            if kind == "subscriber":
                complimentary_access_grant(user=user, reason="load benchmark")
            client = Client()
            client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
            readers.append({"kind": kind, "session": client.cookies[settings.SESSION_COOKIE_NAME].value})
    return {"free": free, "locked": locked, "exercises": exercises, "readers": readers}


if __name__ == "__main__":
    json.dump(main(int(sys.argv[1])), sys.stdout)
