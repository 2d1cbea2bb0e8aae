#!/usr/bin/env python3
"""cluster.py - a compile farm of network namespaces on one machine (root).

Each run builds, under a unique name prefix ``bcc-<pid>-<rand>``:

  * ``<prefix>-br``  a namespace holding only the bridge ``br0``;
  * ``<prefix>-cl``  the client namespace, 10.213.0.1/24 on ``eth0``;
  * ``<prefix>-hI``  host I (0-based), 10.213.0.(10+I)/24 on ``eth0``,
    with its own daemon (boltccd, or Debian's distccd) and cache dir.

Every veth pair is created inside the bridge namespace with its peer moved
straight into the host or client namespace: the root namespace (the
machine's real network) is never touched, and because every run has its own
bridge namespace the same private subnet can be used by parallel runs.

Link profiles (tc tbf for the rate on both ends of every link; there is no
netem, so latency comes from tests/cluster/delayrelay in front of each
daemon, which holds every chunk for the one-way delay in each direction):

  ========  ===============  ===================
  profile   rate             one-way delay added
  ========  ===============  ===================
  tb5       80 Gbit/s        0.04 ms
  10gbe     10 Gbit/s        0.05 ms
  1gbe      1 Gbit/s         0.25 ms
  lo        unlimited        none (no relay)
  ========  ===============  ===================

The client's link gets the same rate as the hosts' links.  Measured RTTs
are in tests/cluster/README.md (``cluster.py rtt`` measures them).

Python API (standard library only)::

    import sys; sys.path.insert(0, "tests/cluster"); import cluster
    with cluster.Cluster(hosts=3, slots=2, profile="tb5",
                         build="/tmp/build-x") as c:   # boltccd in each host
        print(c.hosts_string())        # "10.213.0.10:13632/2,bolt ..."
        r = c.run_client(["make", "-j6"], cwd=..., env=...)  # CompletedProcess
        c.kill(1)                      # SIGKILL host 1's daemon
        c.link(2, False)               # cut host 2's link; c.link(2, True)
        c.drop(0, 30)                  # drop 30% of host 0's packets (nft)
        c.delay(0, 5.0)                # one-way delay 5 ms from now on
        c.blackhole(1)                 # daemon replaced: accepts, never answers
        c.start(1)                     # (re)start host 1's real daemon
        c.stats(0)                     # the daemon's /stats.json as a dict
    # leaving the block (also by an exception or SIGTERM/SIGINT) tears
    # everything down: daemons, relays, namespaces; down() checks that no
    # namespace of the run is left and raises otherwise.

  Cluster(hosts=N, slots=S or [S0, S1, ...], profile="lo", build=DIR,
          distccd=False, daemon_args=[...], state=DIR or None,
          port=13632, stats_port=13633, log_level="debug")
    build: the build dir with boltccd (and tests/cluster/delayrelay, made
    on demand with `make -C build tests/cluster/delayrelay`).
    state: where logs, caches and state.json go (a temp dir if None; kept
    if given).  daemon_args go to every daemon (e.g. --allow-compiler X).
  c.hosts: list of dicts {index, name, netns, addr, port, stats_port, pid,
    slots, kind}; c.client_netns; c.client_addr; c.subnet.
  c.hosts_string(kind=None): "ADDR:PORT/SLOTS,bolt ..." for boltccd hosts
    (",bolt" left out for distccd hosts, or with kind="plain");
    BOLTCC_HOSTS / DISTCC_HOSTS value.
  c.run_client(argv, **subprocess_kwargs) runs argv in the client
    namespace; c.popen_client(argv, **kw) for a background process.
  c.exec_host(i, argv, **kw): a command inside host i's namespace.
  c.alive(i): is host i's daemon running.
  c.info(): the JSON-able description `up` prints.

Command line (state dir holds state.json; the namespaces outlive `up`):

  cluster.py up --hosts N [--slots S[,S2,...]] [--profile P] [--distccd]
                --build DIR --state DIR [--daemon-arg ARG]... [--port P]
      prints the info JSON: {"prefix", "profile", "client": {"netns",
      "addr"}, "subnet", "hosts": [...], "BOLTCC_HOSTS", "DISTCC_HOSTS"}
  cluster.py exec --state DIR [--host I] -- CMD...   (client namespace, or
      host I's); exit status is CMD's
  cluster.py fault --state DIR --host I kill|start|down|up|drop PCT|
      delay MS|blackhole|clear
      (clear: no drop, profile delay, link up)
  cluster.py rtt --state DIR [--host I] [--count N]: TCP ping-pong RTT
      through the host's job port path (relay included), microseconds
  cluster.py down --state DIR
  cluster.py gc [--all]: remove leftovers of runs whose owner is gone
  cluster.py check: exit 0 if namespaces can be created here, 77 if not

Exit status 77 from `up`/`check` means "cannot run here" (not root, no
`ip`, namespaces not permitted): tests treat it as a skip.
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
SUBNET = "10.213.0.0/24"
CLIENT_ADDR = "10.213.0.1"
REGISTRY = "/run/boltcc-cluster"
PREFIX = "bcc-"

# rate for tbf, one-way delay in microseconds
PROFILES = {
    "tb5": ("80gbit", 40),
    "10gbe": ("10gbit", 50),
    "1gbe": ("1gbit", 250),
    "lo": (None, 0),
}


class ClusterError(Exception):
    pass


class CannotRun(ClusterError):
    """Namespaces cannot be created here: a test should skip (77)."""


def _run(argv, check=True, quiet=False, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    r = subprocess.run(argv, **kw)
    if check and r.returncode != 0:
        raise ClusterError("%s: exit %d: %s" % (" ".join(argv), r.returncode,
                           (r.stderr or "").strip()))
    return r


def host_addr(i):
    return "10.213.0.%d" % (10 + i)


def can_run():
    """None if namespaces work here, else the reason."""
    if os.geteuid() != 0:
        return "not root"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return "%s not found (iproute2)" % tool
    name = "%sprobe-%d" % (PREFIX, os.getpid())
    r = _run(["ip", "netns", "add", name], check=False)
    if r.returncode != 0:
        return "cannot create a network namespace: %s" % r.stderr.strip()
    _run(["ip", "netns", "del", name], check=False)
    return None


def netns_list():
    r = _run(["ip", "netns", "list"], check=False)
    out = []
    for line in (r.stdout or "").splitlines():
        if line.strip():
            out.append(line.split()[0])
    return out


def netns_pids(ns):
    r = _run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in (r.stdout or "").split() if x.isdigit()]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    except (OSError, IndexError):
        pass
    return True


def kill_wait(pid, sig=signal.SIGTERM, timeout=5.0):
    """Signal pid, wait for it to go (reaping it if it is our child)."""
    if pid is None or pid <= 0:
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        if not pid_alive(pid):
            return
        time.sleep(0.02)
    if sig != signal.SIGKILL:
        kill_wait(pid, signal.SIGKILL, timeout)


def _reap_children():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def wait_port(ns, addr, port, timeout=15.0, proc=None):
    """Wait until addr:port accepts a TCP connection inside ns."""
    end = time.monotonic() + timeout
    code = ("import socket,sys\n"
            "s=socket.socket();s.settimeout(1)\n"
            "try:\n s.connect((%r,%d))\nexcept OSError:\n sys.exit(1)\n"
            % (addr, port))
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        if _run(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                check=False).returncode == 0:
            return True
        time.sleep(0.05)
    return False


BLACKHOLE_PY = r"""
import socket, sys, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
held = []
def drain(c):
    try:
        while c.recv(65536):
            pass
    except OSError:
        pass
    time.sleep(3600)
while True:
    c, _ = s.accept()
    held.append(c)
    threading.Thread(target=drain, args=(c,), daemon=True).start()
"""

RTT_PY = r"""
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
n = int(sys.argv[3])
best = []
for i in range(n):
    t = time.perf_counter_ns()
    s.sendall(b"x")
    if s.recv(1) != b"x":
        sys.exit(1)
    best.append((time.perf_counter_ns() - t) / 1000.0)
best.sort()
print("%.1f %.1f %.1f" % (best[0], best[len(best) // 2], best[-1]))
"""

ECHO_PY = r"""
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(4)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    b = c.recv(65536)
    if not b:
        break
    c.sendall(b)
"""


class Cluster:
    def __init__(self, hosts=3, slots=2, profile="lo", build=None,
                 distccd=False, daemon_args=(), state=None, port=13632,
                 stats_port=13633, log_level="debug", _load=None):
        if _load is not None:
            self._from_state(_load)
            return
        if profile not in PROFILES:
            raise ClusterError("unknown profile %r (%s)" % (
                profile, ", ".join(PROFILES)))
        if not 1 <= hosts <= 200:
            raise ClusterError("hosts must be 1..200")
        if isinstance(slots, int):
            slots = [slots] * hosts
        slots = list(slots)
        if len(slots) == 1:
            slots = slots * hosts
        if len(slots) != hosts:
            raise ClusterError("need one slot count or one per host")
        why = can_run()
        if why is not None:
            raise CannotRun(why)
        self.build = os.path.abspath(build or os.getcwd())
        self.profile = profile
        self.distccd = distccd
        self.daemon_args = list(daemon_args)
        self.port = port
        self.stats_port = stats_port
        self.log_level = log_level
        self.keep_state = state is not None
        if state is None:
            state = tempfile.mkdtemp(prefix="bc-cluster.")
        os.makedirs(state, exist_ok=True)
        os.chmod(state, 0o755)
        self.state = os.path.abspath(state)
        self.prefix = "%s%d-%04x" % (PREFIX, os.getpid(),
                                     random.randrange(0x10000))
        self.owner = os.getpid()
        self.bridge_ns = self.prefix + "-br"
        self.client_netns = self.prefix + "-cl"
        self.client_addr = CLIENT_ADDR
        self.subnet = SUBNET
        self.relay_bin = None
        self.hosts = []
        for i in range(hosts):
            self.hosts.append({
                "index": i, "name": "h%d" % i,
                "netns": "%s-h%d" % (self.prefix, i),
                "addr": host_addr(i), "port": port,
                "stats_port": stats_port, "pid": None, "relay_pid": None,
                "slots": slots[i], "kind": "distccd" if distccd else "boltccd",
                "delay_us": PROFILES[profile][1], "link": "up",
                "drop_pct": 0, "blackhole": False,
            })
        self._down = False
        try:
            self._up()
        except BaseException:
            self.down(check=False)
            raise

    # ---------------------------------------------------------- state
    def _state_file(self):
        return os.path.join(self.state, "state.json")

    def _save(self):
        d = {k: getattr(self, k) for k in (
            "build", "profile", "distccd", "daemon_args", "port",
            "stats_port", "log_level", "state", "prefix", "owner",
            "bridge_ns", "client_netns", "client_addr", "subnet",
            "relay_bin", "hosts")}
        tmp = self._state_file() + ".tmp"
        with open(tmp, "w") as f:
            json.dump(d, f, indent=1)
        os.replace(tmp, self._state_file())

    def _from_state(self, state):
        with open(os.path.join(state, "state.json")) as f:
            d = json.load(f)
        for k, v in d.items():
            setattr(self, k, v)
        self.keep_state = True
        self._down = False

    @classmethod
    def load(cls, state):
        """The cluster `cluster.py up --state DIR` made."""
        return cls(_load=os.path.abspath(state))

    def _register(self, owner):
        os.makedirs(REGISTRY, exist_ok=True)
        with open(os.path.join(REGISTRY, self.prefix), "w") as f:
            json.dump({"owner": owner, "state": self.state}, f)

    def detach(self):
        """Keep the cluster after this process exits (CLI `up`)."""
        self.owner = None
        self._register(None)
        self._save()

    # ------------------------------------------------------------ up
    def _relay_binary(self):
        p = os.path.join(self.build, "tests", "cluster", "delayrelay")
        if not os.access(p, os.X_OK):
            r = _run(["make", "-C", self.build, "tests/cluster/delayrelay"],
                     check=False)
            if r.returncode != 0 or not os.access(p, os.X_OK):
                raise ClusterError("no %s and `make` could not build it: %s"
                                   % (p, (r.stderr or "")[-500:]))
        return p

    def _tbf(self, ns, dev, rate):
        # burst: at least one 10 ms worth is not needed with hrtimers;
        # a few hundred KB keeps 10-80 Gbit/s reachable on veth.
        _run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev",
              dev, "root", "tbf", "rate", rate, "burst", "4mb",
              "latency", "20ms"])

    def _link(self, ns, addr, bridge_port):
        _run(["ip", "-n", self.bridge_ns, "link", "add", bridge_port, "type",
              "veth", "peer", "name", "eth0", "netns", ns])
        _run(["ip", "-n", self.bridge_ns, "link", "set", bridge_port,
              "master", "br0", "up"])
        _run(["ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0"])
        _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
        _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        rate = PROFILES[self.profile][0]
        if rate is not None:
            self._tbf(ns, "eth0", rate)
            self._tbf(self.bridge_ns, bridge_port, rate)

    def _up(self):
        self._register(self.owner)
        self._save()
        if PROFILES[self.profile][1] > 0:
            self.relay_bin = self._relay_binary()
        for ns in [self.bridge_ns, self.client_netns] + \
                [h["netns"] for h in self.hosts]:
            _run(["ip", "netns", "add", ns])
        # no IPv6 DAD noise, no forwarding anywhere
        _run(["ip", "-n", self.bridge_ns, "link", "add", "br0", "type",
              "bridge"])
        _run(["ip", "-n", self.bridge_ns, "link", "set", "br0", "up"])
        _run(["ip", "-n", self.bridge_ns, "link", "set", "lo", "up"])
        self._link(self.client_netns, self.client_addr, "cl")
        for h in self.hosts:
            self._link(h["netns"], h["addr"], h["name"])
            os.makedirs(self._hdir(h), exist_ok=True)
        self._save()
        for h in self.hosts:
            self.start(h["index"], _save=False)
        self._save()

    def _hdir(self, h):
        return os.path.join(self.state, h["name"])

    def _spawn(self, ns, argv, log):
        out = open(log, "ab")
        try:
            p = subprocess.Popen(["ip", "netns", "exec", ns] + argv,
                                 stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT,
                                 start_new_session=True)
        finally:
            out.close()
        return p

    def _daemon_argv(self, h, listen, allow):
        d = self._hdir(h)
        if h["kind"] == "distccd":
            argv = ["distccd", "--daemon", "--no-detach", "--listen", listen,
                    "--port", str(self.port), "--jobs", str(h["slots"]),
                    "--stats", "--stats-port", str(self.stats_port),
                    "--log-file", os.path.join(d, "distccd.log"),
                    "--log-level", "info", "--user", "distccd"]
            for a in allow:
                argv += ["--allow", a]
            return argv + self.daemon_args
        argv = [os.path.join(self.build, "boltccd"), "--no-detach",
                "--listen", listen, "--port", str(self.port),
                "--stats-port", str(self.stats_port),
                "--jobs", str(h["slots"]),
                "--cache-dir", os.path.join(d, "cache"),
                "--log-file", os.path.join(d, "boltccd.log"),
                "--log-level", self.log_level]
        for a in allow:
            argv += ["--allow", a]
        return argv + self.daemon_args

    def _relayed(self):
        return PROFILES[self.profile][1] > 0

    def start(self, i, _save=True):
        """(Re)start host i's daemon (and its relay if the profile delays)."""
        h = self.hosts[i]
        self._stop_daemon(h)
        d = self._hdir(h)
        if h["kind"] == "distccd":
            os.chmod(d, 0o777)
        if self._relayed():
            # daemon on loopback behind the relay; the relay owns the public
            # address so the delay applies to every byte of every job
            listen, allow = "127.0.0.1", [self.subnet, "127.0.0.1"]
        else:
            listen, allow = h["addr"], [self.subnet]
        log = os.path.join(d, "daemon.out")
        p = self._spawn(h["netns"], self._daemon_argv(h, listen, allow), log)
        h["pid"] = p.pid
        h["blackhole"] = False
        if not wait_port(h["netns"], listen, self.stats_port, proc=p):
            raise ClusterError("%s daemon did not come up; see %s" % (
                h["name"], log))
        if not wait_port(h["netns"], listen, self.port, proc=p):
            raise ClusterError("%s daemon not listening; see %s" % (
                h["name"], log))
        if self._relayed() and not (h.get("relay_pid") and
                                    pid_alive(h["relay_pid"])):
            self._start_relay(h)
        if _save:
            self._save()

    def _start_relay(self, h):
        d = self._hdir(h)
        dfile = os.path.join(d, "delay_us")
        with open(dfile, "w") as f:
            f.write("%d\n" % h["delay_us"])
        argv = [self.relay_bin, "--delay-us", str(h["delay_us"]),
                "--delay-file", dfile]
        for port in (self.port, self.stats_port):
            argv += ["--map", "%s:%d=127.0.0.1:%d" % (h["addr"], port, port)]
        p = self._spawn(h["netns"], argv, os.path.join(d, "relay.out"))
        h["relay_pid"] = p.pid
        if not wait_port(h["netns"], h["addr"], self.port, proc=p):
            raise ClusterError("%s relay did not come up" % h["name"])

    def _stop_daemon(self, h, sig=signal.SIGTERM):
        if h.get("pid"):
            kill_wait(h["pid"], sig, timeout=3.0)
            h["pid"] = None
        if h["kind"] == "distccd":
            # distccd's children are in its session: the namespace's
            # processes other than the relay are all ours
            for pid in netns_pids(h["netns"]):
                if pid != h.get("relay_pid"):
                    kill_wait(pid, signal.SIGKILL, timeout=3.0)

    # -------------------------------------------------------- faults
    def kill(self, i):
        """SIGKILL host i's daemon (its running workers keep going until
        they notice; boltccd workers are in the same session and are
        killed too, like a machine losing its daemon)."""
        h = self.hosts[i]
        if h.get("pid"):
            try:
                os.killpg(h["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
            kill_wait(h["pid"], signal.SIGKILL)
            h["pid"] = None
        # workers and compilers that left the daemon's process group
        for pid in netns_pids(h["netns"]):
            if pid != h.get("relay_pid"):
                kill_wait(pid, signal.SIGKILL, timeout=3.0)
        self._save()

    def alive(self, i):
        pid = self.hosts[i].get("pid")
        return bool(pid) and pid_alive(pid)

    def link(self, i, up):
        """Set host i's link (the bridge end of its veth) up or down."""
        h = self.hosts[i]
        _run(["ip", "-n", self.bridge_ns, "link", "set", h["name"],
              "up" if up else "down"])
        h["link"] = "up" if up else "down"
        self._save()

    def drop(self, i, pct):
        """Drop pct% of the packets host i receives and sends (nftables
        numgen random in host i's namespace; 0 removes the rule)."""
        h = self.hosts[i]
        if shutil.which("nft") is None:
            raise ClusterError("nft not found (apt-get install nftables)")
        ns = h["netns"]
        _run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet",
              "bccdrop"], check=False)
        pct = int(pct)
        if pct > 0:
            rules = ("table inet bccdrop {\n"
                     " chain in { type filter hook input priority 0;"
                     " iifname \"eth0\" numgen random mod 100 < %d drop; }\n"
                     " chain out { type filter hook output priority 0;"
                     " oifname \"eth0\" numgen random mod 100 < %d drop; }\n"
                     "}\n" % (pct, pct))
            _run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=rules)
        h["drop_pct"] = pct
        self._save()

    def delay(self, i, ms):
        """Set host i's one-way delay (relay; needs a delaying profile)."""
        h = self.hosts[i]
        if not self._relayed():
            raise ClusterError("profile %s has no relay; use tb5, 10gbe or "
                               "1gbe for delay faults" % self.profile)
        h["delay_us"] = int(float(ms) * 1000)
        with open(os.path.join(self._hdir(h), "delay_us"), "w") as f:
            f.write("%d\n" % h["delay_us"])
        os.kill(h["relay_pid"], signal.SIGHUP)
        self._save()

    def blackhole(self, i):
        """Replace host i's daemon by a listener that accepts, reads and
        never answers (also its stats port)."""
        h = self.hosts[i]
        self.kill(i)
        listen = "127.0.0.1" if self._relayed() else h["addr"]
        p = self._spawn(h["netns"], [sys.executable, "-c", BLACKHOLE_PY,
                                     listen, str(self.port)],
                        os.path.join(self._hdir(h), "blackhole.out"))
        h["pid"] = p.pid
        h["blackhole"] = True
        if not wait_port(h["netns"], listen, self.port, proc=p):
            raise ClusterError("blackhole on %s did not come up" % h["name"])
        self._save()

    def clear(self, i):
        """Undo link/drop/delay faults on host i (not kill/blackhole)."""
        h = self.hosts[i]
        self.link(i, True)
        self.drop(i, 0)
        if self._relayed():
            self.delay(i, PROFILES[self.profile][1] / 1000.0)

    # -------------------------------------------------------- running
    def hosts_string(self, kind=None):
        parts = []
        for h in self.hosts:
            s = "%s:%d/%d" % (h["addr"], self.port, h["slots"])
            if kind != "plain" and h["kind"] == "boltccd":
                s += ",bolt"
            parts.append(s)
        return " ".join(parts)

    def run_client(self, argv, **kw):
        kw.setdefault("check", False)
        return subprocess.run(["ip", "netns", "exec", self.client_netns] +
                              list(argv), **kw)

    def popen_client(self, argv, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.client_netns] +
                                list(argv), **kw)

    def exec_host(self, i, argv, **kw):
        kw.setdefault("check", False)
        return subprocess.run(["ip", "netns", "exec",
                               self.hosts[i]["netns"]] + list(argv), **kw)

    def stats(self, i, path="/stats.json"):
        """GET the daemon's stats page from the client namespace."""
        h = self.hosts[i]
        code = ("import socket,sys\n"
                "s=socket.create_connection((%r,%d),timeout=5)\n"
                "s.sendall(b'GET %s HTTP/1.0\\r\\n\\r\\n')\n"
                "b=b''\n"
                "while True:\n c=s.recv(65536)\n if not c: break\n b+=c\n"
                "h=b.find(b'\\n\\n')\n"
                "sys.stdout.buffer.write(b[h+2:] if h>=0 else b)\n"
                % (h["addr"], self.stats_port, path))
        r = self.run_client([sys.executable, "-c", code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise ClusterError("stats of %s: %s" % (h["name"], r.stderr))
        body = r.stdout.decode("utf-8", "replace")
        return json.loads(body) if path.endswith(".json") else body

    def rtt(self, i=0, count=200):
        """TCP ping-pong RTT (min, median, max in microseconds) from the
        client to host i's address on a spare port, through a relay with
        the host's delay (none on the lo profile)."""
        h = self.hosts[i]
        eport = self.port + 10
        hdir = self._hdir(h)
        procs = []
        try:
            if self._relayed():
                procs.append(self._spawn(h["netns"], [
                    sys.executable, "-c", ECHO_PY, "127.0.0.1", str(eport)],
                    os.path.join(hdir, "echo.out")))
                wait_port(h["netns"], "127.0.0.1", eport, proc=procs[-1])
                # the echo above accepts one connection: wait_port used it
                procs[-1].wait(timeout=5)
                procs[-1] = self._spawn(h["netns"], [
                    sys.executable, "-c", ECHO_PY, "127.0.0.1", str(eport)],
                    os.path.join(hdir, "echo.out"))
                procs.append(self._spawn(h["netns"], [
                    self.relay_bin, "--delay-us", str(h["delay_us"]),
                    "--map", "%s:%d=127.0.0.1:%d" % (h["addr"], eport + 1,
                                                     eport)],
                    os.path.join(hdir, "echo-relay.out")))
                target = eport + 1
            else:
                procs.append(self._spawn(h["netns"], [
                    sys.executable, "-c", ECHO_PY, h["addr"], str(eport)],
                    os.path.join(hdir, "echo.out")))
                target = eport
            end = time.monotonic() + 10
            while True:
                r = self.run_client([sys.executable, "-c", RTT_PY, h["addr"],
                                     str(target), str(count)],
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
                if r.returncode == 0 or time.monotonic() > end:
                    break
                time.sleep(0.1)
            if r.returncode != 0:
                raise ClusterError("rtt: %s" % r.stderr.strip())
            lo, med, hi = (float(x) for x in r.stdout.split())
            return {"min_us": lo, "median_us": med, "max_us": hi,
                    "count": count}
        finally:
            for p in procs:
                kill_wait(p.pid, signal.SIGKILL)

    def info(self):
        return {
            "prefix": self.prefix, "profile": self.profile,
            "state": self.state, "subnet": self.subnet,
            "client": {"netns": self.client_netns, "addr": self.client_addr},
            "hosts": [{k: h[k] for k in ("index", "name", "netns", "addr",
                                         "port", "stats_port", "pid",
                                         "slots", "kind")}
                      for h in self.hosts],
            "BOLTCC_HOSTS": self.hosts_string(),
            "DISTCC_HOSTS": self.hosts_string("plain"),
        }

    # ---------------------------------------------------------- down
    def down(self, check=True):
        """Kill every process of the run, delete its namespaces; with
        check, raise if anything is left."""
        if getattr(self, "_down", False):
            return
        self._down = True
        nss = [h["netns"] for h in self.hosts] + [self.client_netns,
                                                   self.bridge_ns]
        for h in self.hosts:
            for key in ("pid", "relay_pid"):
                if h.get(key):
                    try:
                        os.killpg(h[key], signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    kill_wait(h[key], signal.SIGKILL, timeout=3.0)
        _teardown(nss)
        _reap_children()
        try:
            os.unlink(os.path.join(REGISTRY, self.prefix))
        except OSError:
            pass
        if not self.keep_state:
            shutil.rmtree(self.state, ignore_errors=True)
        left = [ns for ns in netns_list() if ns.startswith(self.prefix)]
        if check and left:
            raise ClusterError("namespaces left after down: %s" % left)

    def __enter__(self):
        self._old = {}
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                self._old[sig] = signal.signal(sig, _raise_interrupt)
            except ValueError:      # not the main thread
                pass
        return self

    def __exit__(self, *exc):
        try:
            self.down(check=exc[0] is None)
        finally:
            for sig, old in self._old.items():
                signal.signal(sig, old)
        return False


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


def _teardown(nss):
    existing = set(netns_list())
    for ns in nss:
        if ns not in existing:
            continue
        for _ in range(3):
            pids = netns_pids(ns)
            if not pids:
                break
            for pid in pids:
                kill_wait(pid, signal.SIGKILL, timeout=3.0)
        _run(["ip", "netns", "del", ns], check=False)


def gc(all_runs=False):
    """Remove namespaces of runs that are over: the owner process is gone
    (API runs), or the state dir is gone (CLI runs); with all_runs, every
    run.  Returns the prefixes removed."""
    runs = {}
    for ns in netns_list():
        if ns.startswith(PREFIX):
            runs.setdefault(ns.rsplit("-", 1)[0], []).append(ns)
    removed = []
    for prefix, nss in sorted(runs.items()):
        reg = os.path.join(REGISTRY, prefix)
        dead = all_runs
        if not dead:
            try:
                with open(reg) as f:
                    info = json.load(f)
            except (OSError, ValueError):
                info = None
            if info is None:
                dead = True
            elif info.get("owner"):
                dead = not pid_alive(int(info["owner"]))
            else:
                dead = not os.path.exists(os.path.join(
                    info.get("state") or "/nonexistent", "state.json"))
        if not dead:
            continue
        _teardown(nss)
        try:
            os.unlink(reg)
        except OSError:
            pass
        removed.append(prefix)
    return removed


# ------------------------------------------------------------- CLI
def main(argv=None):
    ap = argparse.ArgumentParser(prog="cluster.py",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up")
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--slots", default="2")
    p.add_argument("--profile", default="lo", choices=sorted(PROFILES))
    p.add_argument("--distccd", action="store_true")
    p.add_argument("--build", required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--daemon-arg", action="append", default=[])
    p.add_argument("--port", type=int, default=13632)
    p.add_argument("--stats-port", type=int, default=13633)
    p.add_argument("--log-level", default="debug")
    p = sub.add_parser("exec")
    p.add_argument("--state", required=True)
    p.add_argument("--host", type=int)
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p = sub.add_parser("fault")
    p.add_argument("--state", required=True)
    p.add_argument("--host", type=int, required=True)
    p.add_argument("what", choices=["kill", "start", "down", "up", "drop",
                                    "delay", "blackhole", "clear"])
    p.add_argument("value", nargs="?")
    p = sub.add_parser("rtt")
    p.add_argument("--state", required=True)
    p.add_argument("--host", type=int, default=0)
    p.add_argument("--count", type=int, default=200)
    p = sub.add_parser("info")
    p.add_argument("--state", required=True)
    p = sub.add_parser("down")
    p.add_argument("--state", required=True)
    p = sub.add_parser("gc")
    p.add_argument("--all", action="store_true")
    sub.add_parser("check")
    a = ap.parse_args(argv)

    if a.cmd == "check":
        why = can_run()
        if why:
            print("cluster: cannot run: %s" % why, file=sys.stderr)
            return SKIP
        return 0
    if a.cmd == "gc":
        for prefix in gc(a.all):
            print("removed %s" % prefix)
        return 0
    if a.cmd == "up":
        try:
            slots = [int(x) for x in a.slots.split(",")]
            c = Cluster(hosts=a.hosts, slots=slots, profile=a.profile,
                        build=a.build, distccd=a.distccd,
                        daemon_args=a.daemon_arg, state=a.state,
                        port=a.port, stats_port=a.stats_port,
                        log_level=a.log_level)
        except CannotRun as e:
            print("cluster: cannot run: %s" % e, file=sys.stderr)
            return SKIP
        c.detach()
        print(json.dumps(c.info(), indent=1))
        return 0
    c = Cluster.load(a.state)
    if a.cmd == "exec":
        cmd = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
        if not cmd:
            ap.error("exec needs a command after --")
        r = (c.exec_host(a.host, cmd) if a.host is not None
             else c.run_client(cmd))
        return r.returncode
    if a.cmd == "info":
        print(json.dumps(c.info(), indent=1))
        return 0
    if a.cmd == "rtt":
        print(json.dumps(c.rtt(a.host, a.count)))
        return 0
    if a.cmd == "down":
        c.down(check=True)
        os.unlink(os.path.join(c.state, "state.json"))
        return 0
    i = a.host
    if not 0 <= i < len(c.hosts):
        ap.error("no host %d" % i)
    if a.what in ("drop", "delay") and a.value is None:
        ap.error("%s needs a value" % a.what)
    {"kill": lambda: c.kill(i), "start": lambda: c.start(i),
     "down": lambda: c.link(i, False), "up": lambda: c.link(i, True),
     "drop": lambda: c.drop(i, int(a.value)),
     "delay": lambda: c.delay(i, float(a.value)),
     "blackhole": lambda: c.blackhole(i), "clear": lambda: c.clear(i),
     }[a.what]()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ClusterError as e:
        print("cluster: %s" % e, file=sys.stderr)
        sys.exit(1)
