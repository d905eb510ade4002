# dbserver.sh - start and stop throwaway database servers for the export
# tests and bench/bench-export.sh: data directory and Unix socket under a
# directory of the caller's, no TCP listener, so parallel runs never collide.
#   pg_start DIR     PostgreSQL as user ct (password "secret"), database ct;
#                    sets PGBIN and exports PGHOST PGUSER PGPASSWORD PGDATABASE
#   pg_stop DIR
#   my_start DIR     MariaDB, socket DIR/sock, user ct@localhost ("secret"),
#                    database ct; root by the socket's peer credentials
#   my_stop DIR
# Each returns non-zero (after printing the server's log) when it fails.

# The PostgreSQL server refuses to run as root: as root, run it as postgres.
pg_as() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }

pg_start() {
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)
  [ -x "$PGBIN/initdb" ] || { echo "PostgreSQL server (initdb) not installed"; return 77; }
  mkdir -p "$1" && chmod 755 "$(dirname "$1")" && echo secret > "$1/pw"
  [ "$(id -u)" = 0 ] && chown -R postgres "$1"
  pg_as "'$PGBIN/initdb' -D '$1/data' -A scram-sha-256 -U ct --pwfile='$1/pw'" > "$1/initdb.log" 2>&1 ||
    { cat "$1/initdb.log"; return 1; }
  pg_as "'$PGBIN/pg_ctl' -D '$1/data' -l '$1/log' -w -t 60 -o \"-k $1 -c listen_addresses=''\" start" > "$1/start.log" 2>&1 ||
    { cat "$1/start.log" "$1/log"; return 1; }
  unset PGPORT PGSERVICE PGSSLMODE PGDATABASE 2> /dev/null || true
  export PGHOST="$1" PGUSER=ct PGPASSWORD=secret
  psql -X -q -d postgres -c 'CREATE DATABASE ct' || return 1
  export PGDATABASE=ct
}

pg_stop() { [ -d "$1/data" ] && pg_as "'$PGBIN/pg_ctl' -D '$1/data' -m immediate stop" > /dev/null 2>&1; }

my_start() {
  command -v mariadbd > /dev/null || PATH=$PATH:/usr/sbin
  command -v mariadbd > /dev/null && command -v mariadb-install-db > /dev/null ||
    { echo "MariaDB server not installed"; return 77; }
  mkdir -p "$1"
  myuser=$(id -un)
  mariadb-install-db --no-defaults --datadir="$1/data" --user="$myuser" --auth-root-authentication-method=socket \
    --skip-test-db > "$1/install.log" 2>&1 || { cat "$1/install.log"; return 1; }
  mariadbd --no-defaults --datadir="$1/data" --socket="$1/sock" --skip-networking --user="$myuser" \
    --pid-file="$1/pid" --log-error="$1/err" > /dev/null 2>&1 &
  i=0
  until mariadb --no-defaults -S "$1/sock" -u root -e 'SELECT 1' > /dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 300 ] || { cat "$1/err"; return 1; }
    sleep 0.1
  done
  mariadb --no-defaults -S "$1/sock" -u root -e "CREATE DATABASE ct; CREATE USER 'ct'@'localhost' IDENTIFIED BY 'secret';
    GRANT ALL ON ct.* TO 'ct'@'localhost'"
}

my_stop() {
  [ -f "$1/pid" ] && kill "$(cat "$1/pid")" 2> /dev/null
  i=0; while [ -f "$1/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
