#!/usr/bin/env bash
# Makes sure what the test suite talks to is there and running: PostgreSQL, Redis and
# Debian's chromium (driven by Playwright). Installs them with apt where missing, starts
# them where stopped; does nothing on a machine that already runs them.
set -euo pipefail

missing=()
command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
fresh_postgres=false
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing ${missing[*]} ..."
  [[ " ${missing[*]} " == *" postgresql "* ]] && fresh_postgres=true
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  for _ in $(seq 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if $fresh_postgres; then
  # A new cluster asks for a password over TCP; the tests connect as postgres/postgres.
  su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\""
fi
pg_isready -h 127.0.0.1 -p 5432

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  # Each pytest-xdist process of `make test` takes two databases (config/settings/test.py): room for many.
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --databases 64 \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
echo "redis: $(redis-cli -h 127.0.0.1 -p 6379 ping)"
