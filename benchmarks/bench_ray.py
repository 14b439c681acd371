# Ranks on Ray vs local processes: the same small all_reduce job (2 ranks, nccl backend on one virtual
# H200 each, float32 sum) once under `strata run --nproc 2`'s local processes (bytes over strata's TCP mesh)
# and once as Ray actors on a local 2-node Ray cluster (bytes through Ray: actor calls, and the nodes'
# object stores for large messages). Rows, one per size: Ray's time per all_reduce, the local one, and the
# overhead per collective (Ray minus local), reported (no target: the issue asks for the figure).
#
# The 2 nodes are emulated on this machine with ray.cluster_utils.Cluster: a head node and a second node,
# each its own raylet and object store (1 CPU each); the launcher spreads the rank actors over the nodes,
# and the benchmark checks that the two ranks ran on different nodes. Each rank times its own calls after
# warm-up calls (compile, module load; the first is also checked against NumPy), between barriers; the row
# takes rank 0's median. Without ray installed every row is SKIP.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_ray.py [--iters 10]

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import NO_TARGET, SKIP, BenchResult, format_table, judge, log

SIZES = (4 << 10, 256 << 10, 16 << 20)  # bytes of float32 per rank
RANKS = 2

RANK_SCRIPT = """
import json, os, statistics, sys, time
import numpy as np
import strata
import strata.distributed as dist
from strata.framework.distributed import api, ray_transport

out, iters, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",")]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dev = f"cuda:{os.environ['LOCAL_RANK']}"
dist.init_process_group("nccl")
result = {"transport": type(api._state.mesh).__name__, "sizes": {}}
if ray_transport.current() is not None:
    import ray
    result["node"] = ray.get_runtime_context().get_node_id()
for nbytes in sizes:
    n = nbytes // 4
    data = [np.random.default_rng(1000 * k + n % 997).standard_normal(n).astype(np.float32) for k in range(world)]
    x = strata.tensor(data[rank], device=dev)
    dist.all_reduce(x)  # warm-up (kernels compiled and loaded), checked against NumPy
    correct = bool(np.allclose(x.cpu().numpy(), np.sum(data, axis=0), rtol=1e-5, atol=1e-5))
    dist.all_reduce(x)
    times = []
    for _ in range(iters):
        dist.barrier()
        strata.cuda.synchronize()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        strata.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    result["sizes"][str(nbytes)] = {"median_s": statistics.median(times), "times_s": times, "correct": correct}
dist.destroy_process_group()
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump(result, f)
"""


def _run_job(kind: str, script: Path, iters: int, sizes: tuple[int, ...]) -> dict[str, Any]:
    """Run the job under `kind` ("local" or "ray": Ray must be initialized); rank 0's and 1's results."""
    from strata.framework.distributed.launch import launch
    from strata.framework.distributed.ray_cluster import launch_on_ray

    with tempfile.TemporaryDirectory(prefix=f"strata-bench-ray-{kind}-") as out:
        argv = [out, str(iters), ",".join(map(str, sizes))]
        t0 = time.perf_counter()
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            status = (launch(RANKS, str(script), argv, gpu="h200") if kind == "local"
                      else launch_on_ray(RANKS, str(script), argv, model="h200"))
        wall = time.perf_counter() - t0
        if status != 0:
            raise RuntimeError(f"the {kind} job failed with status {status}: {sink.getvalue()[-2000:]}")
        ranks = [json.loads((Path(out) / f"rank{r}.json").read_text()) for r in range(RANKS)]
    return {"wall_s": wall, "ranks": ranks}


@contextlib.contextmanager
def _two_node_cluster() -> Any:
    """A local Ray cluster of two nodes (head + one), each with 1 CPU and its own object store."""
    import ray  # type: ignore[import-not-found, unused-ignore]
    from ray.cluster_utils import Cluster  # type: ignore[import-not-found, unused-ignore]

    store = 256 << 20
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": store,
                                                            "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=store)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            yield cluster
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()


def bench_ray(iters: int = 10, sizes: tuple[int, ...] = SIZES) -> list[BenchResult]:
    rows = [BenchResult(name=f"ray_allreduce_overhead ({_fmt(s)})",
                        description=f"all_reduce of {_fmt(s)} float32 on {RANKS} ranks: Ray actors on a local "
                                    "2-node Ray cluster vs local processes, overhead per call (Ray - local)",
                        target=NO_TARGET, strata_unit="s", peer_name="local processes (TCP mesh)",
                        ratio_def="ray/local") for s in sizes]
    if importlib.util.find_spec("ray") is None:
        for r in rows:
            r.status = SKIP
            r.add_note("ray is not installed (pip install ray)")
        return rows
    os.environ.pop("STRATA_CLUSTER", None)  # the local job is the default launcher's
    with tempfile.TemporaryDirectory(prefix="strata-bench-ray-") as d:
        script = Path(d) / "allreduce_job.py"
        script.write_text(RANK_SCRIPT)
        log(f"[ray] local processes: {RANKS} ranks, sizes {[_fmt(s) for s in sizes]}, {iters} timed calls each")
        local = _run_job("local", script, iters, sizes)
        log("[ray] starting a local 2-node Ray cluster")
        t0 = time.perf_counter()
        with _two_node_cluster():
            start_s = time.perf_counter() - t0
            log(f"[ray] Ray actors: the same job (cluster up in {start_s:.1f} s)")
            on_ray = _run_job("ray", script, iters, sizes)
    nodes = {r.get("node") for r in on_ray["ranks"]}
    transports = (local["ranks"][0]["transport"], on_ray["ranks"][0]["transport"])
    for s, row in zip(sizes, rows, strict=True):
        lo, ra = local["ranks"][0]["sizes"][str(s)], on_ray["ranks"][0]["sizes"][str(s)]
        row.strata_value = ra["median_s"] - lo["median_s"]
        row.peer_value = lo["median_s"]
        row.ratio = ra["median_s"] / lo["median_s"]
        row.correct = all(rk["sizes"][str(s)]["correct"] for job in (local, on_ray) for rk in job["ranks"])
        row.details.update(ray_median_s=ra["median_s"], local_median_s=lo["median_s"], ray_times_s=ra["times_s"],
                           local_times_s=lo["times_s"], transports=transports, ray_nodes=len(nodes),
                           local_job_wall_s=local["wall_s"], ray_job_wall_s=on_ray["wall_s"],
                           ray_cluster_start_s=start_s)
        row.add_note(f"Ray {ra['median_s'] * 1e3:.2f} ms vs local {lo['median_s'] * 1e3:.2f} ms per call "
                     f"(median of {iters}); transports {transports[1]} vs {transports[0]}; ranks on {len(nodes)} "
                     f"Ray node(s); whole job {on_ray['wall_s']:.1f} s vs {local['wall_s']:.1f} s")
        if len(nodes) != RANKS or transports != ("Mesh", "RayMesh"):
            row.correct = False
            row.add_note("the Ray job did not run one rank per node through RayMesh")
        judge(row, True)
    return rows


def _fmt(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def main() -> int:
    parser = argparse.ArgumentParser(description="all_reduce per-call overhead: ranks on Ray vs local processes.")
    parser.add_argument("--iters", type=int, default=10, help="timed all_reduce calls per size (median reported)")
    args = parser.parse_args()
    results = bench_ray(args.iters)
    print(format_table(results))
    return 0 if all(r.status in ("PASS", SKIP) for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
