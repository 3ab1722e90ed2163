"""What publishing a task raises while the broker is down (kombu's wrapper, or the socket's own error): callers in a
request catch these, so that an outage of the queue is never a reader's 500. Its own module, importing no app and
not the Celery app, so that any app may import it (config imports no app: tests/test_layers.py)."""

from kombu.exceptions import OperationalError as KombuOperationalError

BROKER_ERRORS = (KombuOperationalError, OSError)
