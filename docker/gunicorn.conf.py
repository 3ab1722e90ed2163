"""Gunicorn settings for the `web` service (docker-compose.yml). Every value can be changed from
the environment without rebuilding the image."""

import multiprocessing
import os

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
# WEB_CONCURRENCY is the conventional knob; the default suits a small VM, not the GPU node.
workers = int(os.environ.get("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 9)))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak never takes the site down.
max_requests = 2000
max_requests_jitter = 200
# The application is imported once, in the master, and each worker is a fork of it. Without this every recycled
# worker imported Django and the site again, about a second of CPU: under load (a worker answers 2000 requests in a
# few seconds) that was several restarts a minute and p99 latencies in the hundreds of milliseconds (bench/load.py).
# Nothing opens a connection at import time, so workers share no socket.
preload_app = True
# Heartbeat files in memory: a container's overlay file system can stall them.
worker_tmp_dir = "/dev/shm"
# Request head limits (gunicorn has no body limit: the body cap is Django's, config/body_limit.py, and the proxy's
# client_max_body_size): the request line, the header count and one header's size, gunicorn's defaults written out.
limit_request_line = int(os.environ.get("GUNICORN_LIMIT_REQUEST_LINE", "4094"))
limit_request_fields = int(os.environ.get("GUNICORN_LIMIT_REQUEST_FIELDS", "100"))
limit_request_field_size = int(os.environ.get("GUNICORN_LIMIT_REQUEST_FIELD_SIZE", "8190"))
# Requests are logged as JSON by the Django middleware; gunicorn logs only errors to stderr.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# The TLS proxy in front sets X-Forwarded-Proto; Django trusts it (SECURE_PROXY_SSL_HEADER). gunicorn takes forwarded
# headers (and a SCRIPT_NAME header) only from these addresses, the proxy's: from anyone else they are ignored.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
