#!/bin/sh
# t_ssh.sh - SSH hosts (doc/ssh.md) against Debian's openssh-server on
# 127.0.0.1, with a generated host key and user key in the temp dir:
#  * plain and pump mode through boltccd --inetd under sshd, objects equal
#    to local compiles; the host found through ~/.ssh/config (HostName,
#    Port, User, IdentityFile, UserKnownHostsFile);
#  * session reuse: one SSH session serves many jobs, also when the remote
#    command ends a while after its reply (sshd's log counts
#    the logins), up to BOLTCC_SSH_REUSE_WAIT (then it logs in again);
#    the helper exits when idle;
#  * ~/.ssh/config Include: a host found only through an included file
#    (a relative glob, resolved against ~/.ssh);
#  * ProxyJump: a second sshd on another 127.0.0.1 port is the jump host
#    (its own host key, known_hosts file and Host block).  Both sshds are
#    on this machine, so the target is as reachable directly as through
#    the jump; what proves the jump is used is the jump sshd's own log
#    (LogLevel DEBUG1): per new session, a login there and a direct-tcpip
#    request naming the target's port.  The jump sshd allows tunnels only
#    to the target's and its own port (PermitOpen), so a target at another
#    port fails with a message naming the jump host.  A chain of two (the
#    jump sshd reached through itself), the jump host's key unknown, the
#    target's key wrong behind the jump, and a ProxyCommand host (not
#    supported) fall back with messages naming the hop;
#  * refusals: a wrong user key, a host key that does not match
#    known_hosts, an unknown host key (message names host and SHA256
#    fingerprint), a missing remote command (named, with its exit status),
#    the host going away; each falls back to a local compile, none hangs;
#  * the daemon keeps its compiler allowlist under ssh, also with distcc's
#    --enable-tcp-insecure;
#  * Debian's stock distcc client with an @host entry (DISTCC_SSH) against
#    boltccd --inetd;
#  * one multiplexed channel per session for boltccd hosts (boltccd --mux,
#    counted from the remote command's invocations): 50 jobs in a row and
#    a -j8 burst, plain and pump; the remote boltccd killed mid-build (the
#    build still succeeds, fallbacks counted); a remote that rejects --mux
#    (a channel per job, the refusal remembered); hostile frames written
#    to boltccd --mux by muxdrive.py.
. "$(dirname "$0")/lib.sh"
# the farm's side is under test: this machine's local tier of the cache
# would answer repeated jobs before they reach it (t_hitcache.sh)
BOLTCC_LOCAL_CACHE_SIZE=0
export BOLTCC_LOCAL_CACHE_SIZE
need_binaries
need_tool gcc ssh-keygen
SSHD=/usr/sbin/sshd
[ -x "$SSHD" ] || skip "openssh-server is not installed ($SSHD)"
write_sources
cd "$T/src" || die "no src"

ME=$(id -un)
S="$T/sshd"
H="$T/home"
mkdir -p "$S" "$H/.ssh" && chmod 700 "$H/.ssh" || die "mkdir"
ssh-keygen -q -t ed25519 -N '' -C hostkey -f "$S/host_ed25519" || die "host key"
ssh-keygen -q -t ed25519 -N '' -C user -f "$H/.ssh/id_farm" || die "user key"
ssh-keygen -q -t ed25519 -N '' -C other -f "$H/.ssh/id_other" || die "key"
ssh-keygen -q -t ed25519 -N '' -C fake -f "$T/fake_host" || die "key"
cp "$H/.ssh/id_farm.pub" "$S/authorized_keys"
SPORT=$(freeports 1)
# sshd's privilege separation directory (Debian: /run/sshd)
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd && chmod 755 /run/sshd
cat >"$S/sshd_config" <<EOF
Port $SPORT
ListenAddress 127.0.0.1
HostKey $S/host_ed25519
AuthorizedKeysFile $S/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PidFile $S/sshd.pid
LogLevel VERBOSE
MaxStartups 200:30:400
EOF
"$SSHD" -D -e -f "$S/sshd_config" >"$T/sshd.log" 2>&1 &
_PIDS="$_PIDS $!"
_i=0
while ! grep -q "Server listening" "$T/sshd.log" 2>/dev/null; do
	_i=$((_i + 1))
	[ $_i -gt 50 ] && { cat "$T/sshd.log"; skip "sshd did not start"; }
	sleep 0.1
done

# The client's own HOME: ssh config with absolute paths (so that the ssh
# binary, which reads the passwd entry's home, can use it with -F too).
cat >"$H/.ssh/config" <<EOF
Host farm-wrongkey
  HostName 127.0.0.1
  Port $SPORT
  User $ME
  IdentityFile $H/.ssh/id_other
  UserKnownHostsFile $H/.ssh/known_hosts_farm
Host farm-badkh
  UserKnownHostsFile $H/.ssh/known_hosts_fake
Host farm-unknown
  UserKnownHostsFile $H/.ssh/known_hosts_empty
Host farm farm-badkh farm-unknown
  HostName 127.0.0.1
  Port $SPORT
  User $ME
  IdentityFile $H/.ssh/id_farm
  UserKnownHostsFile $H/.ssh/known_hosts_farm
EOF
printf '[127.0.0.1]:%s %s\n' "$SPORT" "$(cut -d' ' -f1,2 "$S/host_ed25519.pub")" \
	>"$H/.ssh/known_hosts_farm"
printf '[127.0.0.1]:%s %s\n' "$SPORT" "$(cut -d' ' -f1,2 "$T/fake_host.pub")" \
	>"$H/.ssh/known_hosts_fake"
: >"$H/.ssh/known_hosts_empty"
FP=$(ssh-keygen -lf "$S/host_ed25519.pub" | cut -d' ' -f2)
HOME=$H
SSH_AUTH_SOCK=
export HOME SSH_AUTH_SOCK
unset SSH_AUTH_SOCK
BOLTCC_SSH_IDLE=5
# A job waits this long (ms) for a session whose remote command is still
# ending before it logs in again: the login counts below are about the
# helper's choices, not about how fast a sanitized boltccd exits on a busy
# machine (a short wait is checked with a slower remote below).
BOLTCC_SSH_REUSE_WAIT=60000
export BOLTCC_SSH_IDLE BOLTCC_SSH_REUSE_WAIT

# The remote command: boltccd with this test's cache and temp dirs (sshd
# gives commands a clean environment), sanitizer reports kept in $T.
mkdir -p "$T/bin"
D="$T/bin/boltccd-ssh"
cat >"$D" <<EOF
#!/bin/sh
echo "\$\$ \$*" >>"$T/remote.calls"
TMPDIR="$T/tmp"
ASAN_OPTIONS="$ASAN_OPTIONS"
UBSAN_OPTIONS="$UBSAN_OPTIONS"
export TMPDIR ASAN_OPTIONS UBSAN_OPTIONS
exec "$BOLTCCD" --cache-dir "$T/dcache" "\$@"
EOF
chmod +x "$D"

logins() { grep -c "Accepted publickey" "$T/sshd.log"; }
# helper_why N MAX: when N logins exceed MAX, the helper's last word on a
# session or channel it gave up (put into the count's label, so that a
# failure says why it logged in again)
helper_why() {
	[ "$1" -le "$2" ] && return 0
	_w=$(grep -E "lost|ended|greet|fail|closed|error|timeout" \
	    "$T/helper.log" 2>/dev/null | tail -n 1 | cut -c1-240)
	[ -n "$_w" ] && printf '; helper: %s' "$_w"
}
# remote boltccd starts by mode (the wrapper logs "pid args" per start)
starts() { _c=$(grep -c "$@" "$T/remote.calls" 2>/dev/null); echo "${_c:-0}"; }

_n=0
# ssh_same LABEL HOSTS ARGS...: compile a fresh variant locally and
# through boltcc (no fallback), compare the objects.
ssh_same() {
	_label=$1; _hosts=$2; shift 2
	rm -f l.o r.o
	_n=$((_n + 1))
	_src=$(variant "$_n")
	gcc "$@" -c "$_src" -o l.o || { fail "$_label: local compile"; return; }
	if ! BOLTCC_HOSTS="$_hosts" DISTCC_FALLBACK=0 timeout 60 \
	    "$BOLTCC" gcc "$@" -c "$_src" -o r.o 2>"$T/err.txt"; then
		fail "$_label: boltcc exited non-zero: $(head -c 600 "$T/err.txt")"
		return
	fi
	check "$_label: object identical to local compile" same_file l.o r.o
	check "$_label: no messages on stderr" [ ! -s "$T/err.txt" ]
	[ -s "$T/err.txt" ] && sed 's/^/    stderr: /' "$T/err.txt"
}

log "--- plain mode over ssh (host from ~/.ssh/config, probe learns boltccd)"
BOLTCC_DIR=$(new_client_dir)
BOLTCC_SSH_HELPER_LOG="$T/helper.log"
export BOLTCC_DIR BOLTCC_SSH_HELPER_LOG
L0=$(logins)
ssh_same "ssh plain -O2" "@farm:$D" -O2 -g0
ssh_same "ssh plain -O0 -Wall" "@farm:$D" -O0 -g0 -Wall
ssh_same "ssh plain, user@host/2 entry" "$ME@farm/2:$D" -O1 -g0
check "ssh: the jobs counted as remote" [ "$(client_stat "$BOLTCC_DIR" jobs_remote_ok)" -ge 3 ]
L1=$(logins)
check "ssh session reuse: 3 jobs + probe used 1 login ($L0 -> $L1$(helper_why $((L1 - L0)) 1))" \
	[ $((L1 - L0)) -eq 1 ]
[ -S "$BOLTCC_DIR/ssh/helper.sock" ] && \
	[ "$(ls -ld "$BOLTCC_DIR/ssh" | cut -c1-10)" = drwx------ ]
check "ssh helper socket in \$DIR/ssh, dir mode 0700" [ $? -eq 0 ]

log "--- a remote that ends a while after its reply still shares the session"
# (as a boltccd storing its result in the cache after replying, on a
# busy machine: the next job must wait for the session, not log in again)
# linger_remote SECONDS: a remote command that ends that long after boltccd
linger_remote() {
	cat >"$T/bin/boltccd-linger$1" <<EOF
#!/bin/sh
"$D" "\$@"
st=\$?
sleep $1
exit \$st
EOF
	chmod +x "$T/bin/boltccd-linger$1"
	echo "$T/bin/boltccd-linger$1"
}
LINGER=$(linger_remote 1.5)
BOLTCC_DIR=$(new_client_dir)
export BOLTCC_DIR
L0=$(logins)
ssh_same "lingering remote, job 1" "@farm:$LINGER" -O1 -g0
ssh_same "lingering remote, job 2" "@farm:$LINGER" -O2 -g0
ssh_same "lingering remote, job 3" "@farm:$LINGER" -O0 -g0
L1=$(logins)
check "lingering remote: 3 jobs + probe used 1 login ($L0 -> $L1$(helper_why $((L1 - L0)) 1))" \
	[ $((L1 - L0)) -eq 1 ]
check "lingering remote: the helper waited for the session" \
	grep -q "waiting for a session that is ending" "$T/helper.log"

log "--- ... but not longer than BOLTCC_SSH_REUSE_WAIT"
LINGER=$(linger_remote 6)
_dir=$BOLTCC_DIR
BOLTCC_DIR=$(new_client_dir)	# a helper of its own, started with the wait
_w0=$(grep -c "waiting for a session that is ending" "$T/helper.log")
L0=$(logins)
BOLTCC_SSH_REUSE_WAIT=300 ssh_same "short reuse wait, job 1" "@farm:$LINGER" -O1 -g0
BOLTCC_SSH_REUSE_WAIT=300 ssh_same "short reuse wait, job 2" "@farm:$LINGER" -O2 -g0
L1=$(logins)
_w1=$(grep -c "waiting for a session that is ending" "$T/helper.log")
# (the first job's probe is a request of its own: each request after it
# waited, then logged in)
[ $((_w1 - _w0)) -ge 1 ] && [ $((L1 - L0)) -eq $((_w1 - _w0 + 1)) ]
check "short reuse wait: each later request waited, then logged in again ($((L1 - L0)) logins, $((_w1 - _w0)) waits)" \
	[ $? -eq 0 ]
BOLTCC_DIR=$_dir

log "--- many jobs in a row and in parallel reuse sessions"
L0=$(logins)
_k=0
_jobs=""
while [ $_k -lt 20 ]; do
	_k=$((_k + 1))
	( BOLTCC_HOSTS="@farm:$D,bolt" DISTCC_FALLBACK=0 timeout 60 \
	  "$BOLTCC" gcc -O2 -c "$(variant "p$_k")" -o "p$_k.o" 2>>"$T/par.err" ) &
	_jobs="$_jobs $!"
	if [ $((_k % 4)) = 0 ]; then
		for _j in $_jobs; do wait "$_j"; done
		_jobs=""
	fi
done
_okp=0
for _k in $(seq 1 20); do [ -s "p$_k.o" ] && _okp=$((_okp + 1)); done
check "20 jobs, 4 at a time: all objects written" [ $_okp = 20 ]
check "20 jobs: no errors" [ ! -s "$T/par.err" ]
L1=$(logins)
check "20 jobs used at most 5 logins ($((L1 - L0))$(helper_why $((L1 - L0)) 5))" [ $((L1 - L0)) -le 5 ]

log "--- pump mode over ssh (,cpp,lzo)"
BOLTCC_DIR=$(new_client_dir)
ssh_same "ssh pump -O2" "@farm:$D,cpp,lzo" -O2 -g0
check "ssh pump: sent in pump mode" [ "$(client_stat "$BOLTCC_DIR" jobs_pump)" -ge 1 ]

log "--- cache lookups over ssh"
BOLTCC_DIR=$(new_client_dir)
_src=$(variant cache1)
gcc -O2 -c "$_src" -o l.o
BOLTCC_HOSTS="@farm:$D,bolt" DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c "$_src" -o r1.o
rm -f r2.o
BOLTCC_HOSTS="@farm:$D,bolt" DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c "$_src" -o r2.o
check "cache over ssh: second compile is a cache hit" \
	[ "$(client_stat "$BOLTCC_DIR" cache_hits)" -ge 1 ]
check "cache over ssh: object identical" same_file l.o r2.o

log "--- refusals name the problem and fall back"
# refused HOSTS LABEL PATTERN: with fallback the object is built locally
# and the warning matches PATTERN; without fallback exit is non-zero.
refused() {
	_hosts=$1; _label=$2; _pat=$3
	BOLTCC_DIR=$(new_client_dir)
	rm -f r.o
	_t0=$(date +%s)
	BOLTCC_HOSTS="$_hosts" timeout 60 "$BOLTCC" gcc -O2 -c hello.c -o r.o \
		2>"$T/err.txt"
	_rc=$?
	_t1=$(date +%s)
	[ $_rc = 0 ] && [ -s r.o ]
	check "$_label: falls back to a local compile (rc $_rc)" [ $? -eq 0 ]
	if grep -q -- "$_pat" "$T/err.txt"; then
		pass "$_label: message says: $(head -c 300 "$T/err.txt")"
	else
		fail "$_label: message lacks '$_pat': $(head -c 400 "$T/err.txt")"
	fi
	check "$_label: took under 20 s" [ $((_t1 - _t0)) -lt 20 ]
	BOLTCC_HOSTS="$_hosts" DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 \
		-c hello.c -o r.o 2>/dev/null
	check "$_label: DISTCC_FALLBACK=0 fails" [ $? != 0 ]
}
refused "@farm-wrongkey:$D" "wrong user key" \
	"public key authentication refused"
refused "@farm-badkh:$D" "host key mismatch" \
	"HOST KEY MISMATCH for farm-badkh.*ssh-ed25519 key $FP"
refused "@farm-unknown:$D" "unknown host key" \
	"host key of farm-unknown.*is not known: ssh-ed25519 $FP"
refused "@farm:$T/no/such/boltccd" "missing remote command" \
	"remote command \`$T/no/such/boltccd --inetd\` could not be run.*exit 127"

log "--- ~/.ssh/config Include: a host found through an included file"
mkdir -p "$H/.ssh/conf.d"
cat >"$H/.ssh/conf.d/40-farm-inc.conf" <<EOF
Host farm-inc
  HostName 127.0.0.1
  Port $SPORT
  User $ME
  IdentityFile $H/.ssh/id_farm
  UserKnownHostsFile $H/.ssh/known_hosts_farm
EOF
# (after the last Host block: inside it, the Include would only apply to
# its hosts, as in ssh)
printf 'Host *\n  Include conf.d/*.conf\n' >>"$H/.ssh/config"
BOLTCC_DIR=$(new_client_dir)
ssh_same "host from an Included file" "@farm-inc:$D" -O2 -g0

log "--- ProxyJump through a second sshd (the jump host)"
J="$T/jump"
mkdir -p "$J"
ssh-keygen -q -t ed25519 -N '' -C jumpkey -f "$J/host_ed25519" || die "jump key"
set -- $(freeports 2)
JPORT=$1; NOPORT=$2
cat >"$J/sshd_config" <<EOF
Port $JPORT
ListenAddress 127.0.0.1
HostKey $J/host_ed25519
AuthorizedKeysFile $S/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PidFile $J/sshd.pid
LogLevel DEBUG1
MaxStartups 200:30:400
AllowTcpForwarding yes
PermitOpen 127.0.0.1:$SPORT 127.0.0.1:$JPORT
EOF
"$SSHD" -D -e -f "$J/sshd_config" >"$T/jump.log" 2>&1 &
_PIDS="$_PIDS $!"
_i=0
while ! grep -q "Server listening" "$T/jump.log" 2>/dev/null; do
	_i=$((_i + 1))
	[ $_i -gt 50 ] && { cat "$T/jump.log"; die "the jump sshd did not start"; }
	sleep 0.1
done
printf '[127.0.0.1]:%s %s\n' "$JPORT" "$(cut -d' ' -f1,2 "$J/host_ed25519.pub")" \
	>"$H/.ssh/known_hosts_jump"
JFP=$(ssh-keygen -lf "$J/host_ed25519.pub" | cut -d' ' -f2)
# the jump hosts' and the jumped targets' blocks, in an included file too
cat >"$H/.ssh/conf.d/50-jump.conf" <<EOF
Host bastion bastion2 bastion-unknown
  HostName 127.0.0.1
  Port $JPORT
  User $ME
  IdentityFile $H/.ssh/id_farm
Host bastion-unknown
  UserKnownHostsFile $H/.ssh/known_hosts_empty
Host bastion bastion2
  UserKnownHostsFile $H/.ssh/known_hosts_jump
Host farm-jumped farm-chain farm-jbadkh farm-junknown
  HostName 127.0.0.1
  Port $SPORT
Host farm-jumped
  ProxyJump bastion
Host farm-chain
  ProxyJump bastion,bastion2
Host farm-jbadkh
  ProxyJump bastion
  UserKnownHostsFile $H/.ssh/known_hosts_fake
Host farm-junknown
  ProxyJump bastion-unknown
Host farm-denied
  HostName 127.0.0.1
  Port $NOPORT
  ProxyJump bastion
Host farm-pc
  HostName 127.0.0.1
  Port $SPORT
  ProxyCommand nc %h %p
Host farm-*
  User $ME
  IdentityFile $H/.ssh/id_farm
  UserKnownHostsFile $H/.ssh/known_hosts_farm
EOF
jlogins() { grep -c "Accepted publickey" "$T/jump.log"; }
# tunnels the jump sshd was asked for to 127.0.0.1:PORT
# (sshd -e ends its debug lines with CR LF)
jtunnels() { tr -d "\r" <"$T/jump.log" | grep -c "server_request_direct_tcpip: originator .*, target 127.0.0.1 port $1\$"; }
BOLTCC_DIR=$(new_client_dir)
L0=$(logins); JL0=$(jlogins); JT0=$(jtunnels "$SPORT")
ssh_same "ProxyJump, job 1" "@farm-jumped:$D" -O2 -g0
ssh_same "ProxyJump, job 2" "@farm-jumped:$D" -O1 -g0
ssh_same "ProxyJump pump" "@farm-jumped:$D,cpp,lzo" -O2 -g0
L1=$(logins); JL1=$(jlogins); JT1=$(jtunnels "$SPORT")
check "ProxyJump: the jump sshd logged one login ($((JL1 - JL0)))" [ $((JL1 - JL0)) = 1 ]
check "ProxyJump: the jump sshd opened one tunnel to the target's port ($((JT1 - JT0)))" \
	[ $((JT1 - JT0)) = 1 ]
check "ProxyJump: one login on the target, session reused ($((L1 - L0)))" [ $((L1 - L0)) = 1 ]
check "ProxyJump: the helper logged the tunnel" \
	grep -q "tunnel bastion -> 127.0.0.1:$SPORT open" "$T/helper.log"

log "--- ProxyJump chain of two (bastion,bastion2: the jump sshd through itself)"
BOLTCC_DIR=$(new_client_dir)
L0=$(logins); JL0=$(jlogins); JT0=$(jtunnels "$SPORT"); JJ0=$(jtunnels "$JPORT")
ssh_same "ProxyJump chain" "@farm-chain:$D,bolt" -O2 -g0
L1=$(logins); JL1=$(jlogins); JT1=$(jtunnels "$SPORT"); JJ1=$(jtunnels "$JPORT")
[ $((JL1 - JL0)) = 2 ] && [ $((JJ1 - JJ0)) = 1 ] && [ $((JT1 - JT0)) = 1 ] && [ $((L1 - L0)) = 1 ]
check "ProxyJump chain: 2 jump logins ($((JL1 - JL0))), a tunnel to the jump port ($((JJ1 - JJ0))) and one to the target ($((JT1 - JT0))), 1 target login ($((L1 - L0)))" [ $? -eq 0 ]

log "--- ProxyJump failures name the hop"
refused "@farm-junknown:$D" "ProxyJump, jump host key unknown" \
	"jump host bastion-unknown (hop 1 of 1 to farm-junknown): host key of bastion-unknown (\[127.0.0.1\]:$JPORT) is not known: ssh-ed25519 $JFP"
refused "@farm-jbadkh:$D" "ProxyJump, target host key mismatch" \
	"HOST KEY MISMATCH for farm-jbadkh.*ssh-ed25519 key $FP.*(through jump host bastion)"
refused "@farm-denied:$D" "ProxyJump, tunnel refused by the jump host" \
	"jump host bastion cannot open a connection to 127.0.0.1:$NOPORT (for farm-denied)"
check "ProxyJump, tunnel refused: the jump sshd denied it" \
	grep -q "to connect to host 127.0.0.1 port $NOPORT, but the request was denied" "$T/jump.log"
refused "@farm-pc:$D" "ProxyCommand (not supported)" \
	"farm-pc has a ProxyCommand (.*50-jump.conf:[0-9]*), which boltcc does not support; use ProxyJump"

log "--- allowlist under ssh (also with --enable-tcp-insecure)"
cat >"$T/bin/evil-cc" <<'EOF'
#!/bin/sh
touch "$EVIL_MARK"
exit 0
EOF
chmod +x "$T/bin/evil-cc"
cat >"$T/bin/boltccd-insecure" <<EOF
#!/bin/sh
exec "$D" --enable-tcp-insecure "\$@"
EOF
chmod +x "$T/bin/boltccd-insecure"
BOLTCC_DIR=$(new_client_dir)
BOLTCC_HOSTS="@farm:$T/bin/boltccd-insecure,bolt" DISTCC_FALLBACK=0 timeout 60 \
	"$BOLTCC" "$T/bin/evil-cc" -c hello.c -o evil.o 2>"$T/err.txt"
check "a compiler path off the allowlist is refused over ssh" \
	grep -q "refused\|not allowed\|allow" "$T/err.txt"
ssh_same "ssh via --enable-tcp-insecure wrapper still compiles" \
	"@farm:$T/bin/boltccd-insecure" -O2 -g0

log "--- one mux channel per session: 50 jobs in a row, then a -j8 burst"
BOLTCC_DIR=$(new_client_dir)
L0=$(logins); M0=$(starts -- --mux); I0=$(starts -- --inetd)
_bad=0
: >"$T/seq.err"
for _k in $(seq 1 50); do
	_src=$(variant "s$_k")
	gcc -O2 -g0 -c "$_src" -o "ls$_k.o"
	BOLTCC_HOSTS="@farm/8:$D,bolt" DISTCC_FALLBACK=0 timeout 60 \
		"$BOLTCC" gcc -O2 -g0 -c "$_src" -o "rs$_k.o" 2>>"$T/seq.err" ||
		_bad=$((_bad + 1))
	same_file "ls$_k.o" "rs$_k.o" || _bad=$((_bad + 1))
done
check "50 jobs in a row: objects identical to local ($_bad bad)" [ $_bad = 0 ]
check "50 jobs in a row: no messages" [ ! -s "$T/seq.err" ]
_jobs=""
for _k in $(seq 1 16); do
	_src=$(variant "b$_k")
	gcc -O2 -g0 -c "$_src" -o "lb$_k.o"
	( BOLTCC_HOSTS="@farm/8:$D,bolt" DISTCC_FALLBACK=0 timeout 60 \
	  "$BOLTCC" gcc -O2 -g0 -c "$_src" -o "rb$_k.o" 2>>"$T/seq.err" ) &
	_jobs="$_jobs $!"
	if [ $((_k % 8)) = 0 ]; then
		for _j in $_jobs; do wait "$_j"; done
		_jobs=""
	fi
done
_bad=0
for _k in $(seq 1 16); do same_file "lb$_k.o" "rb$_k.o" || _bad=$((_bad + 1)); done
check "-j8 burst of 16: objects identical to local ($_bad bad)" [ $_bad = 0 ]
check "-j8 burst: no messages" [ ! -s "$T/seq.err" ]
check "66 jobs counted as remote" [ "$(client_stat "$BOLTCC_DIR" jobs_remote_ok)" -ge 66 ]
L1=$(logins); M1=$(starts -- --mux); I1=$(starts -- --inetd)
check "66 jobs: one login ($((L1 - L0))$(helper_why $((L1 - L0)) 1))" [ $((L1 - L0)) = 1 ]
check "66 jobs: one remote boltccd --mux started ($((M1 - M0)))" [ $((M1 - M0)) = 1 ]
check "66 jobs: no remote boltccd --inetd started ($((I1 - I0)))" [ $((I1 - I0)) = 0 ]

log "--- plain and pump mode through the mux channel"
BOLTCC_DIR=$(new_client_dir)
M0=$(starts -- --mux); I0=$(starts -- --inetd)
ssh_same "mux plain -O2" "@farm:$D,bolt" -O2 -g0
ssh_same "mux pump -O2" "@farm:$D,cpp,lzo,bolt" -O2 -g0
check "mux pump: sent in pump mode" [ "$(client_stat "$BOLTCC_DIR" jobs_pump)" -ge 1 ]
M1=$(starts -- --mux); I1=$(starts -- --inetd)
[ $((M1 - M0)) = 1 ] && [ $((I1 - I0)) = 0 ]
check "plain + pump: one --mux start, no --inetd ($((M1 - M0)), $((I1 - I0)))" [ $? -eq 0 ]

log "--- the remote boltccd --mux killed mid-build: the build still succeeds"
BOLTCC_DIR=$(new_client_dir)
awk 'BEGIN { for (i = 0; i < 200; i++) printf "int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * %d ^ (s >> 3); return s; }\n", i, i }' >slow.c
_n0=$(wc -l <"$T/remote.calls")
: >"$T/kill.err"
_jobs=""
for _k in $(seq 1 6); do
	{ echo "int g$_k(void) { return $_k; }"; cat slow.c; } >"slow$_k.c"
	( BOLTCC_HOSTS="@farm/8:$D,bolt" timeout 120 "$BOLTCC" gcc -O2 -g0 \
	  -c "slow$_k.c" -o "rslow$_k.o" 2>>"$T/kill.err" ) &
	_jobs="$_jobs $!"
done
# the mux daemon of this session, once it has workers: kill it
_mpid=""
_i=0
while [ $_i -lt 400 ]; do
	_mpid=$(tail -n +"$((_n0 + 1))" "$T/remote.calls" | grep -e --mux | head -1 | cut -d' ' -f1)
	[ -n "$_mpid" ] && pgrep -P "$_mpid" >/dev/null 2>&1 && break
	_i=$((_i + 1)); sleep 0.05
done
[ -n "$_mpid" ] && pgrep -P "$_mpid" >/dev/null 2>&1
check "kill: found the session's boltccd --mux with workers (pid $_mpid)" [ $? -eq 0 ]
[ -n "$_mpid" ] && kill -KILL "$_mpid" 2>/dev/null
for _j in $_jobs; do wait "$_j"; done
_bad=0
for _k in $(seq 1 6); do
	gcc -O2 -g0 -c "slow$_k.c" -o "lslow$_k.o"
	same_file "lslow$_k.o" "rslow$_k.o" || _bad=$((_bad + 1))
done
check "kill: all 6 objects written and identical to local ($_bad bad)" [ $_bad = 0 ]
_hf=$(client_stat "$BOLTCC_DIR" host_failures)
check "kill: host failures counted ($_hf), those jobs fell back" [ "$_hf" -ge 1 ]
check "kill: the warning says the mux channel failed" \
	grep -q "mux ended\|connection lost" "$T/kill.err"
grep "warning" "$T/kill.err" | head -2 | sed 's/^/    /'

log "--- a remote that rejects --mux: a channel per job, refusal remembered"
OLD="$T/bin/boltccd-old"
cat >"$OLD" <<XEOF
#!/bin/sh
echo "\$*" >>"$T/old.calls"
for a in "\$@"; do
	[ "\$a" = --mux ] && { echo "boltccd: unknown option '--mux' (see --help)" >&2; exit 101; }
done
exec "$D" "\$@"
XEOF
chmod +x "$OLD"
BOLTCC_DIR=$(new_client_dir)
: >"$T/old.calls"
for _k in 1 2 3 4 5; do
	ssh_same "inetd-only remote, job $_k" "@farm:$OLD,bolt" -O2 -g0
done
_om=$(grep -c -e --mux "$T/old.calls"); _oi=$(grep -c -e --inetd "$T/old.calls")
[ "$_om" = 1 ] && [ "$_oi" = 5 ]
check "inetd-only remote: --mux tried once ($_om), then --inetd per job ($_oi)" [ $? -eq 0 ]

log "--- hostile frames against boltccd --mux (muxdrive.py)"
mkdir -p "$T/tmp"
TMPDIR="$T/tmp" timeout 300 python3 "$_here/muxdrive.py" "$BOLTCCD" \
	--no-cache >"$T/muxdrive.out" 2>&1
_mrc=$?
while IFS= read -r _l; do
	case "$_l" in
	"ok   "*) pass "mux: ${_l#ok   }" ;;
	"FAIL "*) fail "mux: ${_l#FAIL }" ;;
	esac
done <"$T/muxdrive.out"
check "muxdrive.py: exit 0 (rc $_mrc)" [ $_mrc = 0 ]
[ $_mrc = 0 ] || tail -5 "$T/muxdrive.out" | sed 's/^/    /'

log "--- connection lost: sshd stopped, jobs fall back without hanging"
BOLTCC_DIR=$(new_client_dir)
BOLTCC_HOSTS="@farm:$D,bolt" DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c hello.c -o r.o
SSHD_PID=$(cat "$S/sshd.pid" 2>/dev/null)
# stock distcc with @host runs the ssh binary: test it before stopping sshd
log "--- stock distcc client, @host entry, DISTCC_SSH, against boltccd --inetd"
if command -v distcc >/dev/null 2>&1; then
	cat >"$T/bin/ssh-farm" <<EOF
#!/bin/sh
exec ssh -F "$H/.ssh/config" -o BatchMode=yes "\$@"
EOF
	chmod +x "$T/bin/ssh-farm"
	_src=$(variant dcc1)
	gcc -O2 -c "$_src" -o l.o
	rm -f r.o
	DISTCC_DIR=$(new_client_dir) DISTCC_SSH="$T/bin/ssh-farm" \
	DISTCC_HOSTS="@farm:$D" DISTCC_FALLBACK=0 DISTCC_SKIP_LOCAL_RETRY=1 \
		timeout 60 distcc gcc -O2 -c "$_src" -o r.o 2>"$T/err.txt"
	check "stock distcc over ssh: exit 0 and object identical" same_file l.o r.o
	[ -s "$T/err.txt" ] && sed 's/^/    distcc: /' "$T/err.txt" | head -5
else
	note "distcc not installed: stock client case not run"
fi

if [ -n "$SSHD_PID" ]; then
	# the listener and the per-connection sshd processes it forked: the
	# sessions the helper holds die with them
	pkill -TERM -P "$SSHD_PID" 2>/dev/null || true
	kill -TERM "$SSHD_PID" 2>/dev/null
	sleep 0.5
	_t0=$(date +%s)
	rm -f r.o
	BOLTCC_HOSTS="@farm:$D,bolt" timeout 60 "$BOLTCC" gcc -O2 -c hello.c -o r.o 2>"$T/err.txt"
	_rc=$?
	_t1=$(date +%s)
	[ $_rc = 0 ] && [ -s r.o ]
	check "sshd gone: local fallback (rc $_rc)" [ $? -eq 0 ]
	check "sshd gone: under 20 s" [ $((_t1 - _t0)) -lt 20 ]
	check "sshd gone: warning names the host" grep -q "@farm" "$T/err.txt"
fi

log "--- the helper exits when idle"
sleep $((BOLTCC_SSH_IDLE + 2))
check "helper socket removed after the idle time" \
	[ ! -S "$BOLTCC_DIR/ssh/helper.sock" ]
finish
