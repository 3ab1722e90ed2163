import re
from tests.submissions.test_views import *  # noqa

def test_dbg(locked_exercise, subscriber):
    s = judged(subscriber, locked_exercise, pct=1.25)
    body = client_for(subscriber).get(f"/submissions/{s.public_id}/").content.decode()
    main = body[body.index("<main"):body.index("</main>")]
    print(re.sub(r"\n\s*\n+", "\n", main))
    print(s.status, s.verdict, s.message, list((s.result or {}).keys()))
