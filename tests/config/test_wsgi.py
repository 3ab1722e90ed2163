"""config/wsgi.py, imported once by gunicorn's master before it forks the workers (preload_app), loads what every
worker needs: the URLconf with every view, and our templates compiled. A new worker then starts warm."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import config.wsgi
from django.template import engines
from django.urls import get_resolver
loader = engines["django"].engine.template_loaders[0]
print(json.dumps({
    "views": "apps.reading.views" in sys.modules and "apps.submissions.views" in sys.modules,
    "urlconf": "url_patterns" in get_resolver().__dict__,
    "templates": sorted({template.origin.template_name for template in loader.get_template_cache.values()}),
}))
"""


def test_importing_the_wsgi_module_loads_the_views_and_compiles_the_templates():
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.test", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded["views"] and loaded["urlconf"]
    assert {"base.html", "reading/capsule.html", "_header.html", "reading/_complete_form.html"} <= set(
        loaded["templates"]
    )
