#!/usr/bin/env bash
# net_ssh.sh - what OpenSSH costs a node stream (issue 17).  Starts a
# throwaway sshd on 127.0.0.1 (as tests/cli/multinode.py does), then, RUNS
# times each:
#   1. a .gtrace stream of EVENTS simulated events through a pipe and through
#      ssh (ssh 127.0.0.1 cat FILE): wall time, MB/s, events/s, and the CPU
#      seconds of the ssh client + server (from /proc of their process tree,
#      via getrusage of the children: bash's `times`)
#   2. a node at 500 k events/s (gtrace record -o - -- gtrace sim --live
#      --rate 500000) merged by `gtrace record --from`, through sh -c and
#      through ssh: events received and the CPU time of everything.
# usage: bench/net_ssh.sh [BUILD [EVENTS [RUNS]]]   (default build 10000000 3)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
EVENTS=${2:-10000000}
RUNS=${3:-3}
G=$BUILD/tui/gtrace
D=$(mktemp -d /tmp/gtrace-netssh-XXXXXX)
SSHD_PID=
cleanup() { [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$D/host"
ssh-keygen -q -t ed25519 -N '' -f "$D/user"
cp "$D/user.pub" "$D/authorized_keys"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$D/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey $D/host
AuthorizedKeysFile $D/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PidFile $D/sshd.pid
LogLevel ERROR
EOF
[ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$D/sshd_config" 2>"$D/sshd.log" &
SSHD_PID=$!
SSH="ssh -T -p $PORT -i $D/user -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
for _ in $(seq 50); do $SSH 127.0.0.1 true 2>/dev/null && break; sleep 0.2; done
$G sim -o "$D/s.gtrace" --events "$EVENTS" --gpus 8 >/dev/null 2>&1
# CPU seconds sshd's finished children (the sessions) used so far
sshd_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($16+$17)/hz}' "/proc/$SSHD_PID/stat"; }
BYTES=$(stat -c %s "$D/s.gtrace")
echo "stream: $EVENTS events, $BYTES bytes ($(python3 -c "print(round($BYTES/$EVENTS,2))") bytes/event)"
now() { date +%s.%N; }
cpu() { python3 -c 'import os; t=os.times(); print(t.children_user+t.children_system)'; }
for r in $(seq "$RUNS"); do
	t0=$(now); cat "$D/s.gtrace" | cat > /dev/null; t1=$(now)
	pipe=$(python3 -c "print(round($t1-$t0,3))")
	s0=$(sshd_cpu)
	c=$(python3 - "$SSH" "$D/s.gtrace" <<'EOF'
import os, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1].split() + ["127.0.0.1", "cat", sys.argv[2]], stdout=subprocess.DEVNULL, check=True)
w = time.monotonic() - t
u = os.times()
print("%.3f %.3f" % (w, u.children_user + u.children_system))
EOF
)
	w=${c% *}; cc=${c#* }
	sleep 0.3
	sc=$(python3 -c "print(round($(sshd_cpu)-$s0,2))")
	echo "run $r: pipe ${pipe} s; ssh ${w} s ($(python3 -c "print(round($BYTES/$w/1e6,1))") MB/s, $(python3 -c "print(round($EVENTS/$w/1e6,2))") M events/s), CPU: ssh client ${cc} s, sshd session ${sc} s"
done
# a 500 k events/s node through sh -c and through ssh, merged by record --from
for via in sh ssh; do
	node="$G record -q -o - -- $G sim --live --rate 500000 --seconds 5 --linger 0"
	[ $via = ssh ] && node="$SSH 127.0.0.1 '$node 2>/dev/null'"
	out=$( { /usr/bin/time -f "%e s wall, %U s user, %S s sys (recorder + node tree)" \
		$G record -q -o "$D/m-$via.gtrace" --force --from "$node"; } 2>&1 | tail -2)
	echo "$via: $out"
done
