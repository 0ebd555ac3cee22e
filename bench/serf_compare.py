#!/usr/bin/env python3
"""meshnode beside HashiCorp Serf on the same machine, in the same run.

For each fleet size N it runs N `meshnode` daemons (real TLS stand-in
listeners and services, the roster's default parameters, 5 countries) on
127.4.x.y, then N `serf agent`s (profile lan) on 127.5.x.y, one system at a
time, and measures for each:

  * bytes on the wire per node per day at steady state, sent + received,
    from nftables counters on the output hook (every loopback packet passes
    it once: `ip saddr X` is X sending, `ip daddr X` is X receiving; IP
    packet lengths, no link header), over a window after a warm-up;
  * the same bytes by port, one class of traffic each (meshnode: probes to
    the traffic listener's port, gossip to the gossip port, the panel API;
    Serf: its one gossip port, TCP and UDP), with packet counts, so that
    probes and gossip, and payload and TCP/IP headers, are told apart on
    the wire and not from a model; whatever matches no class is "other";
  * within a class, the TCP packets of one exact IP length that stand for
    one kind of packet ("shapes"): pure ACKs (52 B: IP and TCP headers with
    timestamps, no payload) in both systems, and meshnode's empty frames,
    the keepalives of quiet links (83 B: the 27-byte frame of
    docs/PROTOCOL.md §4a, with roster version 1, boot counter 1 and a
    frame counter of two bytes, as in a fleet's first hours, its 4-byte
    length prefix and its headers; frame format 1 made it 100 B);
  * RSS (VmRSS at the end of the window; also RssAnon, and USS and PSS
    from smaps_rollup) and CPU seconds per minute
    (utime + stime over the window) per process;
  * the machine's idle share over the window, with a warning under 20%:
    a fleet that saturates the machine measures the machine;
  * the time until every other node sees a killed node as failed (meshnode:
    its daemon and its listener killed, status `unreachable`; Serf: its agent
    killed, status `failed`);
  * a partial block (one node cut, both ways, from the nodes of one
    country): what every node reports of it over time;
  * (at the smallest N) the time from a fresh start until every node
    agrees, over STARTS fresh starts (meshnode: every node shows one digest
    holding every report; Serf: every agent lists N alive members).

Prints a table and writes the figures as JSON. Needs root (nftables).

  bench/serf_compare.py BUILD_DIR N [N ...]
    WARMUP_S (180) WINDOW_S (600) STARTS (10) BLOCK_S (300) OUT (serf-compare.json)
    SYSTEMS ("meshnode serf": either alone re-measures one side)
    RUNS (1): fresh fleets per system and size, alternating meshnode and Serf;
      the steady-state figures are the medians over the runs (each run's own
      figures are kept under "runs"), the ratios are those of the medians
    PHASES ("kill block starts"): what runs after the last steady window;
      "" measures the steady state only
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

COUNTRIES = ["DE", "NL", "FR", "GB", "US"]
WARMUP_S = int(os.environ.get("WARMUP_S", "180"))
WINDOW_S = int(os.environ.get("WINDOW_S", "600"))
STARTS = int(os.environ.get("STARTS", "10"))
BLOCK_S = int(os.environ.get("BLOCK_S", "300"))
SYSTEMS = os.environ.get("SYSTEMS", "meshnode serf").split()
RUNS = int(os.environ.get("RUNS", "1"))
PHASES = os.environ.get("PHASES", "kill block starts").split()
STEADY_KEYS = ("bytes_per_node_day", "bytes_per_node_day_max", "bytes_per_node_day_by_port", "cpu_s_per_min", "cpu_s_per_min_max",
               "rss_mib", "rss_mib_max", "rss_anon_mib", "uss_mib", "pss_mib", "machine_idle_share")
RATIO_KEYS = ("bytes_per_node_day", "bytes_per_node_day_by_port", "cpu_s_per_min", "rss_mib", "rss_anon_mib",
              "uss_mib", "pss_mib")
CLASS_SUFFIXES = ("_bytes_per_node_day", "_packets_per_node_day", "_bytes_per_packet")
TICKS = os.sysconf("SC_CLK_TCK")
TABLE = "mnbench"


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def nft(script):
    subprocess.run(["nft", "-f", "-"], input=script, check=True, text=True)


def loopback_addresses(system, n):
    """N addresses of 127.SYSTEM.0.0/16, 250 per /24: no cap at 254 nodes."""
    return [f"127.{system}.{i // 250}.{i % 250 + 1}" for i in range(n)]


# ---- nftables: per-address byte counters, and blocks ----

def counters_start(addresses, ports, local_ports=(), shapes=None):
    """Per-address counters, and counters per traffic class of `ports`
    ({class: [port, ...]}): a packet of the class has the port as its
    source or its destination, and passes the output hook once. The class
    rules come last and end the chain (`accept`; the blocks are a chain of
    their own, before this one), so a packet from port 7946 to port 7946
    counts once.

    Packets between 127.0.0.1 and one of `local_ports` come first and are
    counted apart, as "local", in no address and no class: meshnode's check
    of its own traffic listener connects from 127.0.0.1 (the kernel's
    source for a local address), and on a server that connection stays on
    the machine and never reaches the wire.

    `shapes` ({class: {shape: IP length}}) adds counters, before the class
    rules and ending nothing, for the TCP packets of the class's ports of
    exactly that length: a subset of the class, under ("shape", "class
    shape"). An ephemeral source port is never the class's port, so no
    packet counts twice."""
    rules = "".join(
        f'add rule inet {TABLE} out meta l4proto tcp ip {src} 127.0.0.1 th {end} {port} counter accept '
        f'comment "local self_check"\n'
        for port in local_ports for src, end in (("saddr", "dport"), ("daddr", "sport")))
    rules += "\n".join(
        f'add rule inet {TABLE} out ip saddr {a} counter comment "tx {a}"\n'
        f'add rule inet {TABLE} out ip daddr {a} counter comment "rx {a}"'
        for a in addresses)
    rules += "".join(
        f'\nadd rule inet {TABLE} out meta l4proto tcp th {end} {port} ip length {length} counter '
        f'comment "shape {name} {shape}"'
        for name, of_class in (shapes or {}).items() for shape, length in of_class.items()
        for port in ports[name] for end in ("sport", "dport"))
    rules += "".join(
        f'\nadd rule inet {TABLE} out meta l4proto {{ tcp, udp }} th {end} {port} counter accept comment "class {name}"'
        for name, class_ports in ports.items() for port in class_ports for end in ("sport", "dport"))
    nft(f"add table inet {TABLE}\ndelete table inet {TABLE}\n"
        f"add table inet {TABLE}\n"
        f"add chain inet {TABLE} out {{ type filter hook output priority 0; }}\n"
        f"add chain inet {TABLE} blocks {{ type filter hook output priority -10; }}\n"
        f"{rules}\n")


def counters_read():
    """Sent + received bytes per address, and (bytes, packets) per class
    under the keys ("class", name), ("local", name) and ("shape", "class
    shape")."""
    listing = json.loads(sh("nft", "-j", "list", "table", "inet", TABLE))
    totals = {}
    for item in listing["nftables"]:
        rule = item.get("rule")
        if not rule or rule.get("chain") != "out":
            continue
        kind, name = rule.get("comment", " ").split(" ", 1)
        for expr in rule["expr"]:
            if "counter" not in expr:
                continue
            if kind in ("class", "local", "shape"):
                b, p = totals.get((kind, name), (0, 0))
                totals[(kind, name)] = (b + expr["counter"]["bytes"], p + expr["counter"]["packets"])
            else:
                totals[name] = totals.get(name, 0) + expr["counter"]["bytes"]
    return totals


def block(node, group):
    rules = "\n".join(f"add rule inet {TABLE} blocks ip saddr {a} ip daddr {b} drop\n"
                      f"add rule inet {TABLE} blocks ip saddr {b} ip daddr {a} drop"
                      for a in [node] for b in group)
    nft(rules + "\n")


def unblock():
    nft(f"flush chain inet {TABLE} blocks\n")


def counters_stop():
    subprocess.run(["nft", "delete", "table", "inet", TABLE], capture_output=True)


# ---- processes ----

def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def machine_ticks():
    """(idle, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal; guest and guest_nice
    # (the fields after) are already counted in user and nice.
    return fields[3] + fields[4], sum(fields[:8])


def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def smaps_kib(pid, fields):
    """The sum of `fields` in /proc/PID/smaps_rollup (Private_Clean +
    Private_Dirty is the unique set size: what the process alone holds)."""
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in fields:
                total += int(rest.split()[0])
    return total


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def wait_until(predicate, timeout_s, every_s):
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if predicate():
            return time.monotonic() - start
        time.sleep(every_s)
    return None


def kill(proc):
    proc.kill()
    proc.wait()


class Fleet:
    """What both systems share: each live node's word on one server."""

    def pids(self):
        raise NotImplementedError

    def status_at(self, i, target):
        raise NotImplementedError

    def status_of(self, target):
        """Each live node's status of server `target` ("no answer" on errors)."""
        seen = {}
        for i in self.pids():
            if i == target:
                continue
            try:
                seen[i] = self.status_at(i, target)
            except Exception:
                seen[i] = "no answer"
        return seen


# ---- meshnode ----

class MeshnodeFleet(Fleet):
    def __init__(self, build, n, work):
        self.build, self.n, self.work = build, n, work
        self.meshctl = f"{build}/tools/meshctl/meshctl"
        self.addresses = loopback_addresses(4, n)
        self.token = os.urandom(16).hex()
        digest = sh("sha256sum", input=self.token).split()[0]
        with open(f"{work}/api-tokens", "w") as f:
            f.write(f"read {digest}\n")
        operator = sh(self.meshctl, "keygen", "--out", f"{work}/operator.key").strip()
        lines = ["version = 1", "[[routes]]", 'id = "all"', 'name = "All"']
        for i, a in enumerate(self.addresses):
            os.makedirs(f"{work}/n{i}", exist_ok=True)
            key = sh(self.meshctl, "keygen", "--out", f"{work}/n{i}/node.key").strip()
            lines += ["[[servers]]", f'id = "n{i}"', f'country = "{COUNTRIES[i % 5]}"',
                      f'probe = "{a}:8443"', f'sni = "www.n{i}.bench.example"',
                      f'gossip = "{a}:4716"', f'key = "{key}"', 'routes = ["all"]']
        with open(f"{work}/roster.toml", "w") as f:
            f.write("\n".join(lines) + "\n")
        sh(self.meshctl, "roster", "sign", "--key", f"{work}/operator.key", "--out",
           f"{work}/roster.signed", f"{work}/roster.toml")
        for i, a in enumerate(self.addresses):
            with open(f"{work}/n{i}/meshnode.toml", "w") as f:
                f.write(f'node_id = "n{i}"\nkey_file = "{work}/n{i}/node.key"\n'
                        f'operator_key = "{operator}"\ndata_dir = "{work}/n{i}/data"\n'
                        f'roster_file = "{work}/roster.signed"\n'
                        f'[gossip]\nlisten = "{a}:4716"\nsource_address = "{a}"\n'
                        f'[probe]\nsource_address = "{a}"\n'
                        f'[self_check]\nservice = "process:vpn-s{i}"\n'
                        f'[api]\nlisten = "{a}:4717"\ntoken_file = "{work}/api-tokens"\n')
        self.standins = {}
        self.daemons = {}
        self.ports = {"probe": [8443], "gossip": [4716], "api": [4717]}
        self.local_ports = [8443]
        # Pure ACKs, and empty frames (keepalives): 4 + 27 B of frame
        # (docs/PROTOCOL.md §2 and §4a: a header of 8 B with boot counter 1
        # and a frame counter from 128 to 16 383, roster version 1 above,
        # the tag) + 52 B of headers.
        self.shapes = {"gossip": {"pure_ack": 52, "empty_frame": 83}}
        self.has_epochs = True

    def start_standins(self):
        standin = f"{self.build}/tools/standin/meshnode-standin"
        for i, a in enumerate(self.addresses):
            log = open(f"{self.work}/n{i}/standin.log", "a")
            self.standins[i] = [
                subprocess.Popen([standin, "listen", "--address", f"{a}:8443"], stdout=log, stderr=log),
                subprocess.Popen([standin, "service", "--name", f"vpn-s{i}"], stdout=log, stderr=log)]

    def start(self, fresh):
        for i in range(self.n):
            data = f"{self.work}/n{i}/data"
            if fresh:
                shutil.rmtree(data, ignore_errors=True)
            os.makedirs(data, mode=0o700, exist_ok=True)
            log = open(f"{self.work}/n{i}/meshnode.log", "a")
            self.daemons[i] = subprocess.Popen(
                [f"{self.build}/node/meshnode", "--config", f"{self.work}/n{i}/meshnode.toml"],
                stdout=log, stderr=log)

    def stop(self):
        stop(list(self.daemons.values()))
        self.daemons = {}

    def stop_all(self):
        self.stop()
        stop([p for pair in self.standins.values() for p in pair])

    def pids(self):
        return {i: p.pid for i, p in self.daemons.items() if p.poll() is None}

    def get(self, i, path):
        request = urllib.request.Request(f"http://{self.addresses[i]}:4717{path}",
                                         headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.load(answer)

    def status_at(self, i, target):
        servers = self.get(i, "/v1/servers")
        return next(s["status"] for s in servers if s["id"] == f"n{target}")

    def kill_host(self, i):
        kill(self.daemons.pop(i))
        for p in self.standins[i]:
            kill(p)

    def agreed(self):
        digests = set()
        for i in self.pids():
            try:
                mesh = self.get(i, "/v1/mesh")
            except Exception:
                return False
            if mesh.get("records", 0) < self.n + 1:  # every report and the roster
                return False
            digests.add(mesh.get("digest"))
        return len(digests) == 1


# ---- Serf ----

class SerfFleet(Fleet):
    def __init__(self, n, work):
        self.n, self.work = n, work
        self.addresses = loopback_addresses(5, n)
        self.agents = {}
        self.ports = {"gossip": [7946]}
        self.local_ports = []
        self.shapes = {"gossip": {"pure_ack": 52}}  # its TCP push/pull
        self.has_epochs = False

    def start(self, fresh=True):
        for i, a in enumerate(self.addresses):
            log = open(f"{self.work}/serf{i}.log", "a")
            args = ["serf", "agent", f"-node=s{i}", f"-bind={a}:7946", f"-rpc-addr={a}:7373",
                    "-log-level=warn"]
            if i > 0:
                args += [f"-retry-join={self.addresses[0]}:7946", "-retry-interval=1s"]
            self.agents[i] = subprocess.Popen(args, stdout=log, stderr=log)
            if i == 0:
                time.sleep(1)

    def stop(self):
        stop(list(self.agents.values()))
        self.agents = {}

    def pids(self):
        return {i: p.pid for i, p in self.agents.items() if p.poll() is None}

    def members(self, i):
        out = subprocess.run(["serf", "members", f"-rpc-addr={self.addresses[i]}:7373",
                              "-format=json"], capture_output=True, text=True, timeout=10)
        return {m["name"]: m["status"] for m in json.loads(out.stdout)["members"]}

    def status_at(self, i, target):
        return self.members(i).get(f"s{target}", "absent")

    def kill_host(self, i):
        kill(self.agents.pop(i))

    def agreed(self):
        for i in self.pids():
            try:
                members = self.members(i)
            except Exception:
                return False
            if sum(1 for s in members.values() if s == "alive") != self.n:
                return False
        return True


# ---- one system at one size ----

# The roster's defaults (docs/CONFIG.md): epochs of an hour, and a warm-up of
# (fail_streak 3 + 2) x probe_interval 60 s = 300 s before each switch, in
# which the next epoch's witnesses probe their new targets as well: about
# twice the probes for those 5 minutes of every hour (docs/PERFORMANCE.md, "Beside Serf").
EPOCH_S = 3600
EPOCH_WARMUP_S = 300


def warmup_overlap_s(t0, t1):
    """Seconds of [t0, t1) (Unix time) inside a warm-up before an epoch switch."""
    overlap = 0
    switch = (int(t0) // EPOCH_S + 1) * EPOCH_S
    while switch - EPOCH_WARMUP_S < t1:
        overlap += max(0, min(t1, switch) - max(t0, switch - EPOCH_WARMUP_S))
        switch += EPOCH_S
    return round(overlap)


def steady_state(fleet, addresses):
    pids = fleet.pids()
    wall0 = time.time()
    c0 = counters_read()
    t0 = {i: cpu_ticks(p) for i, p in pids.items()}
    m0 = machine_ticks()
    time.sleep(WINDOW_S)
    c1 = counters_read()
    m1 = machine_ticks()
    # A fleet that saturates the machine measures the machine, not itself
    # (Serf at N = 200 on 2 cores: README): the idle share says which.
    idle = (m1[0] - m0[0]) / max(1, m1[1] - m0[1])
    if idle < 0.2:
        print(f"   WARNING: the machine was {100 * idle:.0f}% idle over the window: "
              "these figures are of an overloaded machine", flush=True)
    cpu = [(cpu_ticks(p) - t0[i]) / TICKS / (WINDOW_S / 60) for i, p in pids.items()]
    rss = [rss_kib(p) / 1024 for p in pids.values()]
    # RssAnon: the process's own memory (heap, stacks); the rest of VmRSS is
    # file pages (the program, shared libraries), shared with every process
    # that maps the same files.
    anon = [rss_kib(p, "RssAnon") / 1024 for p in pids.values()]
    # USS: the pages no other process maps (heap, stacks, written pages);
    # PSS: each page divided by the processes that map it.
    uss = [smaps_kib(p, ("Private_Clean", "Private_Dirty")) / 1024 for p in pids.values()]
    pss = [smaps_kib(p, ("Pss",)) / 1024 for p in pids.values()]
    per_day = [(c1[a] - c0[a]) * 86400 / WINDOW_S for a in addresses]
    result = {"bytes_per_node_day": statistics.median(per_day), "bytes_per_node_day_max": max(per_day),
              "cpu_s_per_min": statistics.median(cpu), "cpu_s_per_min_max": max(cpu),
              "rss_mib": statistics.median(rss), "rss_mib_max": max(rss),
              "rss_anon_mib": statistics.median(anon), "uss_mib": statistics.median(uss),
              "pss_mib": statistics.median(pss), "machine_idle_share": round(idle, 3)}
    # By class: every packet counts for its sender and its receiver, so a
    # node's mean sent + received is 2 x the class's bytes / N. These are
    # means over the nodes (the figure above is the median node).
    scale = 2 * 86400 / WINDOW_S / len(addresses)
    classified = 0
    for name in fleet.ports:
        b = c1[("class", name)][0] - c0[("class", name)][0]
        packets = c1[("class", name)][1] - c0[("class", name)][1]
        result[f"{name}_bytes_per_node_day"] = b * scale
        result[f"{name}_packets_per_node_day"] = packets * scale
        result[f"{name}_bytes_per_packet"] = b / packets if packets else 0
        classified += b * scale
    # Every packet of the system's ports, the mean node: unlike the figure
    # by address it also counts packets from 127.0.0.1 (Serf opens its TCP
    # push/pull without binding a source address).
    result["bytes_per_node_day_by_port"] = classified
    # Shapes: parts of their class, named shape_CLASS_SHAPE_..., in no total.
    for name, of_class in fleet.shapes.items():
        for shape in of_class:
            key = ("shape", f"{name} {shape}")
            b, packets = c1[key][0] - c0[key][0], c1[key][1] - c0[key][1]
            result[f"shape_{name}_{shape}_bytes_per_node_day"] = b * scale
            result[f"shape_{name}_{shape}_packets_per_node_day"] = packets * scale
    if fleet.has_epochs:  # a window in a warm-up sees more probes than a day's mean
        result["window_in_epoch_warmup_s"] = warmup_overlap_s(wall0, time.time())
        if result["window_in_epoch_warmup_s"]:
            print(f"   NOTE: {result['window_in_epoch_warmup_s']} s of the window fell in the warm-up before "
                  "an epoch switch (the 5 minutes before each hour), when the next epoch's witnesses probe "
                  "too: its probe bytes are above the day's mean", flush=True)
    result["other_bytes_per_node_day"] = statistics.mean(per_day) - classified
    if fleet.local_ports:
        local = c1[("local", "self_check")][0] - c0[("local", "self_check")][0]
        result["local_self_check_bytes_per_node_day"] = local * 86400 / WINDOW_S / len(addresses)
    return result


def detection(fleet, failed_word):
    target = 0
    fleet.kill_host(target)
    took = wait_until(lambda: all(s == failed_word for s in fleet.status_of(target).values()),
                      900, 5)
    return took


def partial_block(fleet, addresses, n):
    target = 2  # a server of FR, cut from every server of DE (both ways)
    group = [addresses[i] for i in range(n) if i % 5 == 0 and i != target]
    block(addresses[target], group)
    timeline = []
    start = time.monotonic()
    while time.monotonic() - start < BLOCK_S:
        seen = fleet.status_of(target)
        counts = {}
        for status in seen.values():
            counts[status] = counts.get(status, 0) + 1
        timeline.append({"at_s": round(time.monotonic() - start), "statuses": counts})
        time.sleep(15)
    unblock()
    return timeline


def fresh_starts(fleet):
    times = []
    for _ in range(STARTS):
        fleet.stop()
        fleet.start(fresh=True)
        took = wait_until(fleet.agreed, 600, 2)
        times.append(took)
    return times


def run_system(name, fleet, addresses, n, failed_word, with_starts, setup, last=True):
    print(f"== {name}, N = {n}: warm-up {WARMUP_S} s, window {WINDOW_S} s", flush=True)
    counters_start(addresses, fleet.ports, fleet.local_ports, fleet.shapes)
    try:
        setup()
        time.sleep(WARMUP_S)
        result = steady_state(fleet, addresses)
        print(f"   steady: {result}", flush=True)
        if not last:
            return result
        if with_starts and "starts" in PHASES:
            result["fresh_start_s"] = fresh_starts(fleet)
            print(f"   fresh starts: {result['fresh_start_s']}", flush=True)
            time.sleep(30)
        if "block" in PHASES:
            result["partial_block"] = partial_block(fleet, addresses, n)
            print(f"   partial block: {result['partial_block'][-1]}", flush=True)
        if "kill" in PHASES:
            result["detect_killed_s"] = detection(fleet, failed_word)
            print(f"   killed node seen as {failed_word} by all after {result['detect_killed_s']} s", flush=True)
        return result
    finally:
        counters_stop()


def main():
    if os.geteuid() != 0:
        print("serf_compare: SKIPPED: needs root (nftables counters and blocks)")
        return 0
    build, sizes = sys.argv[1], [int(n) for n in sys.argv[2:]] or [10, 50, 100]
    if WINDOW_S < 300:
        print(f"serf_compare: WINDOW_S = {WINDOW_S} s is shorter than meshnode's 5-minute heartbeat: "
              "a window can miss a node's heartbeat and undercount its bytes")
    out = os.environ.get("OUT", "serf-compare.json")
    results = {"machine": sh("uname", "-srm").strip(), "cores": os.cpu_count(),
               "date": time.strftime("%Y-%m-%d"), "warmup_s": WARMUP_S, "window_s": WINDOW_S,
               "runs": RUNS, "phases": PHASES,
               "serf_version": sh("serf", "version").splitlines()[0], "sizes": {}}
    for n in sizes:
        runs = {"meshnode": [], "serf": []}
        for run in range(RUNS):
            last = run == RUNS - 1
            work = tempfile.mkdtemp(prefix=f"serf-compare-{n}-")
            if "meshnode" in SYSTEMS:
                mesh = MeshnodeFleet(build, n, work)
                try:
                    def setup_mesh():
                        mesh.start_standins()
                        mesh.start(fresh=True)
                    runs["meshnode"].append(run_system("meshnode", mesh, mesh.addresses, n, "unreachable",
                                                       n == min(sizes), setup_mesh, last))
                finally:
                    mesh.stop_all()
            if "serf" in SYSTEMS:
                serf = SerfFleet(n, work)
                try:
                    runs["serf"].append(run_system("serf", serf, serf.addresses, n, "failed", n == min(sizes),
                                                   lambda: serf.start(), last))
                finally:
                    serf.stop()
            shutil.rmtree(work, ignore_errors=True)
        entry = {}
        for system, results_of_runs in runs.items():
            if not results_of_runs:
                continue
            entry[system] = dict(results_of_runs[-1])  # the last run's phases
            keys = [k for k in results_of_runs[0]
                    if k in STEADY_KEYS or k.endswith(CLASS_SUFFIXES) or k == "window_in_epoch_warmup_s"]
            for key in keys:
                entry[system][key] = statistics.median(r[key] for r in results_of_runs)
            if RUNS > 1:
                entry[system]["runs"] = [{k: r[k] for k in keys} for r in results_of_runs]
        m, s = entry.get("meshnode", {}), entry.get("serf", {})
        entry["ratios"] = {k: m[k] / s[k] for k in RATIO_KEYS
                           if s.get(k) and k in m}
        if RUNS > 1 and runs["meshnode"] and runs["serf"]:
            entry["ratios_per_run"] = [{k: m_run[k] / s_run[k] for k in RATIO_KEYS}
                                       for m_run, s_run in zip(runs["meshnode"], runs["serf"])]
        results["sizes"][str(n)] = entry
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
    print()
    print(f"{'N':>5} {'system':9} {'MB/node/day':>12} {'CPU s/min':>10} {'RSS MiB':>8} {'anon MiB':>8} "
          f"{'kill seen s':>11}")
    for n, entry in results["sizes"].items():
        for system in [name for name in ("meshnode", "serf") if name in entry]:
            r = entry[system]
            print(f"{n:>5} {system:9} {r['bytes_per_node_day'] / 1e6:12.1f} {r['cpu_s_per_min']:10.3f} "
                  f"{r['rss_mib']:8.1f} {r['rss_anon_mib']:8.1f} {str(r.get('detect_killed_s', '-')):>11}")
            classes = [k[:-len("_bytes_per_node_day")] for k in r
                       if k.endswith("_bytes_per_node_day") and not k.startswith("shape_")]
            print(f"      by port (mean node): all {r['bytes_per_node_day_by_port'] / 1e6:.1f} MB: " + ", ".join(
                f"{c} {r[c + '_bytes_per_node_day'] / 1e6:.1f} MB"
                + (f" in {r[c + '_packets_per_node_day'] / 1e3:.0f} K packets of {r[c + '_bytes_per_packet']:.0f} B"
                   if c + "_packets_per_node_day" in r else "")
                for c in classes))
            shapes = [k[len("shape_"):-len("_bytes_per_node_day")] for k in r
                      if k.startswith("shape_") and k.endswith("_bytes_per_node_day")]
            if shapes:
                print("      of which, by exact IP length: " + ", ".join(
                    f"{c.replace('_', ' ')} {r['shape_' + c + '_bytes_per_node_day'] / 1e6:.1f} MB "
                    f"in {r['shape_' + c + '_packets_per_node_day'] / 1e3:.0f} K packets" for c in shapes))
        ratios = entry["ratios"]
        if not ratios:  # one system only (SYSTEMS): nothing to compare
            continue
        print(f"{n:>5} {'ratio':9} {ratios.get('bytes_per_node_day', 0):12.2f} "
              f"{ratios.get('cpu_s_per_min', 0):10.2f} {ratios.get('rss_mib', 0):8.2f} {ratios.get('rss_anon_mib', 0):8.2f}"
              f"   (bytes by port: {ratios.get('bytes_per_node_day_by_port', 0):.2f}, "
              f"USS: {ratios.get('uss_mib', 0):.2f}, PSS: {ratios.get('pss_mib', 0):.2f})")
    print(f"JSON: {out}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
