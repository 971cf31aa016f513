"""A throwaway PostgreSQL server for tests and benchmarks: the machine's own binaries
(``initdb``/``pg_ctl``), a data directory under the system temporary directory, a unix socket
there and a TCP port on 127.0.0.1 with password authentication. PostgreSQL refuses to run as
root: as root the server runs as an unprivileged user (``KEYDRIFT_PG_USER``, default
``nobody``) through ``setpriv``.

    server = PostgresServer.start()   # raises Unavailable with the reason when it cannot
    url = server.url("dbname")        # postgresql://postgres:<password>@127.0.0.1:<port>/dbname
    server.stop()
"""

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile

PASSWORD = "kd-" + secrets.token_hex(8)


class Unavailable(Exception):
    """No PostgreSQL server can be started here (the reason is the message)."""


def find_bindir():
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.isfile(os.path.join(candidate, "initdb")):
            return candidate
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    raise Unavailable("no PostgreSQL server binaries (initdb) on this machine: install the postgresql package")


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    def __init__(self, bindir, directory, port, as_user):
        self.bindir = bindir
        self.directory = directory
        self.data = os.path.join(directory, "data")
        self.port = port
        self.as_user = as_user

    @classmethod
    def start(cls):
        bindir = find_bindir()
        as_user = _unprivileged_user() if os.geteuid() == 0 else None
        directory = tempfile.mkdtemp(prefix="keydrift-pg-")
        server = cls(bindir, directory, _free_port(), as_user)
        try:
            server._init()
            server._run("pg_ctl", "-D", server.data, "-l", os.path.join(directory, "log"), "-w", "-t", "30",
                        "-o", f"-p {server.port} -k {directory} -c listen_addresses=127.0.0.1 "
                              "-c fsync=off -c synchronous_commit=off -c full_page_writes=off", "start")
        except Unavailable:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return server

    def _init(self):
        pwfile = os.path.join(self.directory, "pw")
        with open(pwfile, "w") as handle:
            handle.write(PASSWORD + "\n")
        if self.as_user is not None:
            uid, gid = self.as_user
            os.chown(self.directory, uid, gid)
            os.chown(pwfile, uid, gid)
        self._run("initdb", "-D", self.data, "-U", "postgres", "--pwfile", pwfile, "-E", "UTF8",
                  "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync")

    def _run(self, program, *arguments):
        command = [os.path.join(self.bindir, program), *arguments]
        if self.as_user is not None:
            uid, gid = self.as_user
            command = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *command]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.directory)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"cannot run {program}: {exc}") from None
        if done.returncode != 0:
            log = os.path.join(self.directory, "log")
            tail = open(log).read()[-800:] if os.path.exists(log) else ""
            raise Unavailable(f"{program} failed: {(done.stderr or done.stdout).strip()[-800:]} {tail}")

    def url(self, database="postgres", user="postgres", password=PASSWORD, driver="postgresql"):
        return f"{driver}://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def connect(self, database="postgres", user="postgres", password=PASSWORD):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=user, password=password,
                               dbname=database, autocommit=True)

    def create_database(self, name):
        with self.connect() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            connection.execute(f'CREATE DATABASE "{name}"')

    def stop(self):
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        except Unavailable:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)


def _unprivileged_user():
    name = os.environ.get("KEYDRIFT_PG_USER", "nobody")
    if shutil.which("setpriv") is None:
        raise Unavailable("running as root and no setpriv to start PostgreSQL as another user")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise Unavailable(f"running as root and no user {name!r} to run PostgreSQL as") from None
    return entry.pw_uid, entry.pw_gid
