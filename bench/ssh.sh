#!/bin/sh
# bench/ssh.sh - per-job cost of SSH transport: boltcc over SSH (sessions
# reused by the helper) vs boltcc over TCP vs stock distcc over SSH (one
# ssh process per job), N tiny translation units one after another on
# 127.0.0.1.  Starts its own sshd (Debian's openssh-server) on a free port
# with generated keys in a temp dir.  See bench/README.md ("SSH").
#   sh bench/ssh.sh                 BENCH_N=300, BOLTCC_BUILDDIR=build/normal
#   BENCH_KEEP=1 keeps the temp dir.  Not part of `make check`.
set -u
cd "$(dirname "$0")/.." || exit 1
SRC=$(pwd)
: "${BOLTCC_BUILDDIR:=$SRC/build/normal}"
: "${BENCH_N:=300}"
: "${BENCH_CFLAGS:=-O2 -g0}"
B="$BOLTCC_BUILDDIR"
SSHD=/usr/sbin/sshd
for f in "$B/boltcc" "$B/boltccd" "$SSHD"; do
	[ -x "$f" ] || { echo "bench: $f missing (sh setup.sh; apt-get install openssh-server)" >&2; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/bc-bench-ssh.XXXXXX") || exit 1
PIDS=""
cleanup() {
	for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
	case "${SCR:-}" in /dev/shm/bc-bench-ssh.*) rm -rf "$SCR" ;; esac
	[ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
unset DISTCC_HOSTS BOLTCC_HOSTS DISTCC_DIR BOLTCC_DIR SSH_AUTH_SOCK
freeport() { python3 "$SRC/tests/integration/dcc.py" freeport 1; }

# sshd with a generated host key; a generated user key
mkdir -p "$T/sshd" "$T/home/.ssh" "$T/src" "$T/out" "$T/tmp" && chmod 700 "$T/home/.ssh"
ssh-keygen -q -t ed25519 -N '' -f "$T/sshd/host" || exit 1
ssh-keygen -q -t ed25519 -N '' -f "$T/home/.ssh/id_bench" || exit 1
cp "$T/home/.ssh/id_bench.pub" "$T/sshd/authorized_keys"
SPORT=$(freeport)
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
cat >"$T/sshd/config" <<EOF
Port $SPORT
ListenAddress 127.0.0.1
HostKey $T/sshd/host
AuthorizedKeysFile $T/sshd/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin yes
PasswordAuthentication no
PidFile $T/sshd/pid
MaxStartups 500:30:1000
EOF
"$SSHD" -D -e -f "$T/sshd/config" >"$T/sshd.log" 2>&1 &
PIDS="$PIDS $!"
cat >"$T/home/.ssh/config" <<EOF
Host bench
  HostName 127.0.0.1
  Port $SPORT
  User $(id -un)
  IdentityFile $T/home/.ssh/id_bench
  UserKnownHostsFile $T/home/.ssh/known_hosts
EOF
printf '[127.0.0.1]:%s %s\n' "$SPORT" "$(cut -d' ' -f1,2 "$T/sshd/host.pub")" >"$T/home/.ssh/known_hosts"
cat >"$T/ssh-bench" <<EOF
#!/bin/sh
exec ssh -F "$T/home/.ssh/config" -o BatchMode=yes "\$@"
EOF
# Both daemons get a scratch dir of their own (job dirs and the pump file
# store of --no-cache) on the same file system: a tmpfs when the machine
# has one, as boltccd's default, so neither row finds files the other sent.
SCR="$T/scratch"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	SCR=$(mktemp -d /dev/shm/bc-bench-ssh.XXXXXX) || exit 1
fi
mkdir -p "$SCR/tcp" "$SCR/ssh" && chmod 700 "$SCR/tcp" "$SCR/ssh"
cat >"$T/boltccd-ssh" <<EOF
#!/bin/sh
TMPDIR="$T/tmp"; export TMPDIR
exec "$B/boltccd" --no-cache --tmp-dir "$SCR/ssh" "\$@"
EOF
chmod +x "$T/ssh-bench" "$T/boltccd-ssh"
sleep 0.5
HOME="$T/home"
export HOME

# a TCP boltccd
DPORT=$(freeport)
"$B/boltccd" --no-detach --listen 127.0.0.1 --port "$DPORT" --stats-port 0 \
	--no-cache --tmp-dir "$SCR/tcp" --log-file "$T/boltccd.log" &
PIDS="$PIDS $!"
sleep 0.5

i=0
while [ $i -lt "$BENCH_N" ]; do
	i=$((i + 1))
	printf 'int f%d(int x) { return x * %d + 1; }\n' $i $i >"$T/src/t$i.c"
done
now_ms() { date +%s%3N; }

# run LABEL CMD...: compile every TU with CMD, print ms/job
run() {
	label=$1; shift
	dir=$(mktemp -d "$T/dir.XXXXXX")
	fails=0
	t0=$(now_ms)
	i=0
	while [ $i -lt "$BENCH_N" ]; do
		i=$((i + 1))
		BOLTCC_DIR=$dir DISTCC_DIR=$dir "$@" $BENCH_CFLAGS -c "$T/src/t$i.c" \
			-o "$T/out/t$i.o" 2>>"$T/err-$label.txt" || fails=$((fails + 1))
	done
	t1=$(now_ms)
	ms=$(awk -v a="$t0" -v b="$t1" -v n="$BENCH_N" 'BEGIN { printf "%.2f", (b - a) / n }')
	printf '%-34s %8s ms/job  failures %d\n' "$label" "$ms" "$fails"
	eval "MS_$(echo "$label" | tr -c 'a-zA-Z0-9\n' _)=$ms"
}

echo "bench/ssh.sh: $BENCH_N tiny TUs one after another, $BENCH_CFLAGS, $(nproc) CPUs"
export DISTCC_FALLBACK=0 BOLTCC_CACHE=0
run local gcc
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt" run boltcc_tcp "$B/boltcc" gcc
BOLTCC_HOSTS="@bench:$T/boltccd-ssh,bolt" run boltcc_ssh "$B/boltcc" gcc
if command -v distcc >/dev/null 2>&1; then
	DISTCC_SSH="$T/ssh-bench" DISTCC_HOSTS="@bench:$T/boltccd-ssh" \
		run distcc_ssh distcc gcc
	if command -v distccd >/dev/null 2>&1; then
		DISTCC_SSH="$T/ssh-bench" DISTCC_HOSTS="@bench:/usr/bin/distccd" \
			run distcc_ssh_distccd distcc gcc
	fi
fi
# The floor of any SSH transport on this machine: one channel on an
# already open connection (ssh's ControlMaster) running `true` through the
# remote user's shell, as sshd runs every command.
"$T/ssh-bench" -o ControlMaster=yes -o ControlPath="$T/cm" -o ControlPersist=300 -fN bench
floor() { "$T/ssh-bench" -o ControlPath="$T/cm" bench true; }
t0=$(now_ms); i=0
while [ $i -lt "$BENCH_N" ]; do i=$((i + 1)); floor; done
t1=$(now_ms)
MS_floor=$(awk -v a="$t0" -v b="$t1" -v n="$BENCH_N" 'BEGIN { printf "%.2f", (b - a) / n }')
printf '%-34s %8s ms/job\n' "ssh channel floor (remote shell)" "$MS_floor"
"$T/ssh-bench" -o ControlPath="$T/cm" -O exit bench 2>/dev/null
echo
awk -v l="$MS_local" -v f="$MS_floor" -v t="$MS_boltcc_tcp" -v s="$MS_boltcc_ssh" \
    -v d="${MS_distcc_ssh:-0}" 'BEGIN {
	printf "added per job: boltcc/tcp %.2f ms, boltcc/ssh %.2f ms", t - l, s - l
	if (d > 0) printf ", distcc/ssh %.2f ms", d - l
	printf "\nboltcc/ssh vs boltcc/tcp: %.2fx (target <= 1.5x)\n", s / t
	printf "boltcc/ssh less the channel floor vs boltcc/tcp: %.2fx\n", (s - f) / t
	if (d > 0) printf "boltcc/ssh vs distcc/ssh: %.2fx (target <= 0.5x)\n", s / d
}'
echo "ssh logins for the boltcc/ssh row: $(grep -c 'Accepted publickey' "$T/sshd.log") in total (all rows)"
