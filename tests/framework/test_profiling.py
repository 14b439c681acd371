"""L5 trace spans: framework ops, autograd nodes and optimizer steps report themselves under PyTorch's
profiler names, and what they cause below (the library call, the launch) carries their correlation."""

from __future__ import annotations

import strata
import strata.trace as trace
from strata.framework import profiling


def _l5(rec: trace.Recording) -> list[str]:
    return [e.name for e in rec.events if e.layer == "L5"]


def test_training_step_reports_ops_nodes_and_optimizer() -> None:
    strata.manual_seed(0)
    lin = strata.nn.Linear(8, 4).cuda()
    opt = strata.optim.SGD(lin.parameters(), lr=0.1)
    x, y = strata.randn(6, 8, device="cuda"), strata.tensor([0, 1, 2, 3, 0, 1], device="cuda")
    with trace.record() as rec:
        loss = strata.nn.functional.cross_entropy(lin(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
    names = _l5(rec)
    for expected in ("aten::linear", "aten::matmul", "aten::cross_entropy_loss", "aten::item",
                     "Optimizer.zero_grad#SGD.zero_grad", "Optimizer.step#SGD.step",
                     "autograd::engine::evaluate_function: MmBackward0"):
        assert expected in names, (expected, names)
    # the GEMM is caused by aten::matmul: same correlation, deeper
    mm = next(e for e in rec.events if e.name == "aten::matmul")
    gemm = [e for e in rec.events if e.layer == "L4" and e.correlation == mm.correlation]
    assert gemm and all(e.depth > mm.depth for e in gemm)
    launches = [e for e in rec.events if e.layer == "L3" and e.correlation == mm.correlation]
    assert any("gemm" in str(e.args.get("kernel", "")) for e in launches)


def test_one_op_is_one_span_and_nothing_records_when_off() -> None:
    a = strata.ones(3, device="cuda")
    with trace.record() as rec:
        strata.add(a, a)
        _ = a * 2
        _ = a.exp()
    assert _l5(rec) == ["aten::add", "aten::mul", "aten::exp"]  # the dispatcher does not nest a second span
    with trace.record() as rec:
        pass
    _ = a + a
    assert rec.events == []


def test_instrument_wraps_once_and_keeps_the_function() -> None:
    class Ops:
        def twice(self, v: int) -> int:
            """Double v."""
            return 2 * v

    profiling.instrument(Ops, {"twice": "aten::twice"})
    first = Ops.__dict__["twice"]
    profiling.instrument(Ops, {"twice": "aten::twice"})
    assert Ops.__dict__["twice"] is first and first.__doc__ == "Double v."
    with trace.record() as rec:
        assert Ops().twice(4) == 8
    assert _l5(rec) == ["aten::twice"]
