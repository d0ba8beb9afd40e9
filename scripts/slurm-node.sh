#!/usr/bin/env bash
# A real single-node Slurm cluster in a folder, for tests and for trying
# `typist serve --executor slurm` on one machine (no systemd, no /etc edits):
#
#   scripts/slurm-node.sh start DIR   # munged + slurmctld + slurmd, waits for the node idle
#   export SLURM_CONF=DIR/slurm.conf  # sbatch, squeue, sinfo… use this cluster
#   scripts/slurm-node.sh stop DIR    # cancels its jobs, stops all three
#
# Everything lives under DIR: munge's key, socket, pid, log and seed (munge/), the
# daemons' config (slurm.conf), state, spool, pid files and logs. The ports are free
# ones on 127.0.0.1 picked at start, so two clusters (two test runs) can live side by
# side. Needs Debian's `slurm-wlm` and `munge` packages (slurmctld, slurmd, sbatch,
# munged, mungekey). Tried as root only (SlurmUser and SlurmdUser are the caller;
# slurmd as another user than root can at best run that user's own jobs).
#
# What was learned making it run in a container (Debian 12, slurm-wlm 22.05.8, munge
# 0.5.15):
#  - munged refuses a key readable by others, and a socket folder writable by others
#    without the sticky bit: the key is made with `mungekey` (mode 0600) and munge/
#    is 0700. Every Slurm program (daemons and clients) reaches this munged through
#    `AuthInfo=socket=…` in slurm.conf (CredType=cred/munge reads the same option), so
#    nothing needs /run/munge.
#  - No systemd, no cgroup delegation: ProctrackType=proctrack/linuxproc (finds a job's
#    processes by parent pid), TaskPlugin=task/none, JobAcctGatherType=none, and no
#    cgroup.conf; slurmd then starts without touching /sys/fs/cgroup.
#  - slurmd checks its host name against NodeName: `-N localhost` names it, and
#    NodeAddr/NodeHostname=127.0.0.1/localhost keep every message on loopback.
#  - CPUs and RealMemory are read from `slurmd -C` (a node that claims more than it
#    has is drained as "Low RealMemory"); SlurmdParameters=config_overrides keeps it
#    up anyway when a container reports odd figures.
#  - SelectTypeParameters=CR_CPU: memory is not a consumable, so the array's tasks run
#    side by side on the node's CPUs (with CR_*_Memory and no DefMemPerCPU each task
#    would ask for the whole node's memory, one at a time).
#  - No accounting (AccountingStorageType=none): `sacct` does not work; a job's end is
#    seen with `squeue -j ID` (gone) or `scontrol show job ID` (kept for MinJobAge).
#  - The node comes up `unknown`/`down*` for a moment after slurmd registers;
#    ReturnToService=2 brings it to `idle` without an `scontrol update`.
#  - munged logs "Unauthorized credential for client UID=0" at slurmctld's start: a
#    harmless probe, jobs run.
#  - A job starts about a second after sbatch (slurmctld's background loop runs the
#    scheduler it queued); an array's tasks that fit start together.
#  - `squeue --jobs ID --states=all --array` lists each task with its state, ended ones
#    too (COMPLETED, CANCELLED, FAILED…), until MinJobAge; then the id is unknown
#    ("Invalid job id specified", exit 1). Without --states a just-ended job may still
#    be listed for a couple of seconds: ask for the states, do not wait for it to go.
#  - Stopping: jobs are cancelled first (their slurmstepd and tasks end with them),
#    then slurmd, slurmctld and munged are killed by the pids they wrote under DIR.
set -euo pipefail

usage() {
    echo "usage: $0 start DIR | stop DIR | env DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
dir=$2

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "slurm-node: $1 not found: apt-get install slurm-wlm munge" >&2
        exit 1
    }
}

# A free TCP port on 127.0.0.1.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {
    local f=$1 i
    pid_alive "$f" || return 0
    local pid
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

start() {
    for p in munged mungekey slurmctld slurmd sinfo scontrol python3; do need "$p"; done
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if pid_alive "$dir/slurmctld.pid"; then
        echo "slurm-node: a cluster already runs in $dir (stop it first)" >&2
        exit 1
    fi
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
    chmod 0755 "$dir/munge"
    if [ ! -f "$dir/munge/munge.key" ]; then
        mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
        chmod 0600 "$dir/munge/munge.key"
    fi
    local socket="$dir/munge/munge.socket"
    munged --socket="$socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
        --seed-file="$dir/munge/munged.seed" --num-threads=2 ||
        { echo "slurm-node: munged did not start: $(tail -n 1 "$dir/munge/munged.log" 2>/dev/null)" >&2; exit 1; }

    local user cpus mem ctld_port slurmd_port
    user=$(id -un)
    cpus=$(slurmd -C | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')
    mem=$(slurmd -C | sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p')
    ctld_port=$(free_port)
    slurmd_port=$(free_port)
    while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
    cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm-node.sh: a one-node cluster on 127.0.0.1.
ClusterName=typist
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=300
MaxArraySize=10001
KillWait=5
InactiveLimit=0
SlurmdTimeout=60
PlugStackConfig=$dir/plugstack.conf
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    : >"$dir/plugstack.conf"
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -c -f "$SLURM_CONF" ||
        { echo "slurm-node: slurmctld did not start: $(tail -n 1 "$dir/log/slurmctld.log" 2>/dev/null)" >&2; exit 1; }
    slurmd -N localhost -f "$SLURM_CONF" ||
        { echo "slurm-node: slurmd did not start: $(tail -n 1 "$dir/log/slurmd.log" 2>/dev/null)" >&2; exit 1; }
    local i state=""
    for i in $(seq 1 300); do
        state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
        case "$state" in
        idle | mixed | allocated) break ;;
        esac
        sleep 0.1
    done
    case "$state" in
    idle | mixed | allocated) ;;
    *)
        echo "slurm-node: the node is not idle after 30 s (sinfo: ${state:-no answer}); see $dir/log/" >&2
        tail -n 3 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
        exit 1
        ;;
    esac
    echo "SLURM_CONF=$SLURM_CONF"
}

stop() {
    [ -d "$dir" ] || return 0
    dir=$(cd "$dir" && pwd)
    export SLURM_CONF="$dir/slurm.conf"
    if pid_alive "$dir/slurmctld.pid" && command -v scancel >/dev/null; then
        scancel --quiet --full --user="$(id -un)" 2>/dev/null || true
        local i
        for i in $(seq 1 50); do
            [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    stop_pidfile "$dir/slurmd.pid"
    stop_pidfile "$dir/slurmctld.pid"
    stop_pidfile "$dir/munge/munged.pid"
}

case "$cmd" in
start) start ;;
stop) stop ;;
env) echo "SLURM_CONF=$(cd "$dir" && pwd)/slurm.conf" ;;
*) usage ;;
esac
