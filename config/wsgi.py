import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")
application = get_wsgi_application()


def _load_what_every_worker_needs() -> None:
    """gunicorn imports this module once, in its master (preload_app, docker/gunicorn.conf.py), and forks every worker
    from it, also each that replaces a recycled one (max_requests): what is loaded here is loaded once instead of in
    every new worker on its first requests. The URLconf (it imports every view) and the templates, compiled into
    Django's cached loader, took a fourteenth of the workers' time under load (py-spy during bench/load.py). Neither
    opens a connection."""
    from django.conf import settings
    from django.template import engines
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (the import is the point)
    ours = (settings.BASE_DIR / "templates", settings.BASE_DIR / "apps")  # not the packages' own, in the venv
    for engine in engines.all():
        for folder in getattr(engine, "template_dirs", ()):
            for path in sorted(folder.rglob("*.html")) if any(folder.is_relative_to(root) for root in ours) else ():
                engine.get_template(str(path.relative_to(folder)))


_load_what_every_worker_needs()
