"""Starts the workers of data-parallel training: python -m kerascpp.distribute.launch --nproc N script.py args

    --nproc N            workers on this machine
    --nnodes M           machines (default 1); on each run the launcher with its --node-rank
    --node-rank R        this machine's place, 0 .. M-1 (its workers are ranks R*N .. R*N+N-1)
    --master HOST:PORT   where worker 0 serves the rendezvous (needed with several machines; on one, a
                         free local port)
    --timeout S          seconds a worker waits for the others (KERASCPP_DISTRIBUTED_TIMEOUT)

Each worker gets KERASCPP_RANK, KERASCPP_WORLD_SIZE, KERASCPP_MASTER, KERASCPP_LOCAL_RANK and, unless set,
KERASCPP_NUM_THREADS (this machine's cores shared between its workers). When a worker fails, the launcher
stops the others and exits with that worker's code.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m kerascpp.distribute.launch", description=__doc__.split("\n")[0])
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", type=int, default=0)
    p.add_argument("--master", default=None)
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if a.nproc < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
        p.error(f"expected --nproc >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes; received "
                f"{a.nproc}, {a.nnodes}, {a.node_rank}")
    if a.nnodes > 1 and not a.master:
        p.error("--master HOST:PORT is needed with several machines (the address of node 0, which serves it)")
    master = a.master or f"127.0.0.1:{_free_port()}"
    world = a.nproc * a.nnodes
    threads = str(max(1, (os.cpu_count() or 1) // a.nproc))
    procs = []
    for local in range(a.nproc):
        env = dict(os.environ)
        env.pop("TF_CONFIG", None)  # the launcher's cluster wins
        env.update(KERASCPP_RANK=str(a.node_rank * a.nproc + local), KERASCPP_WORLD_SIZE=str(world),
                   KERASCPP_MASTER=master, KERASCPP_LOCAL_RANK=str(local))
        env.setdefault("KERASCPP_NUM_THREADS", threads)
        if a.timeout:
            env["KERASCPP_DISTRIBUTED_TIMEOUT"] = str(a.timeout)
        procs.append(subprocess.Popen([sys.executable, a.script] + a.args, env=env))
    code = 0
    try:
        while procs:
            for proc in list(procs):
                rc = proc.poll()
                if rc is None:
                    continue
                procs.remove(proc)
                if rc != 0 and code == 0:
                    code = rc if rc > 0 else 128 - rc  # killed by a signal: the shell's code
                    print(f"kerascpp.distribute.launch: worker (pid {proc.pid}) exited with code {rc}; "
                          "stopping the others", file=sys.stderr)
                    for other in procs:
                        other.send_signal(signal.SIGTERM)
            time.sleep(0.05)
    except KeyboardInterrupt:
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        for proc in procs:
            proc.wait()
        code = 130
    return code


if __name__ == "__main__":
    sys.exit(main())
