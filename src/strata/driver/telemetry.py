"""Device telemetry: the clocks, power, temperature and utilization a driver reports to `strata smi`.

Source of truth for how those readings follow from the work a device did on its *modeled* timeline
(seconds of modeled device time, never wall time). The model and every constant, with its source or
a [G] guess tag, are described in docs/telemetry.md.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from strata.hw.catalog import GPUSpec

# Sampling window. NVML: "Each sample period may be between 1 second and 1/6 second, depending on
# the product"; the short end keeps short modeled workloads visible.
WINDOW_S = 1.0 / 6.0
# History kept: at least two windows, so a sample may be taken anywhere within the last window. Older
# history is folded into the temperature and dropped in steps of FOLD_STEP_S, so at most
# HISTORY_S + FOLD_STEP_S of intervals are held.
HISTORY_S = 2.0 * WINDOW_S
FOLD_STEP_S = 0.5 * WINDOW_S

IDLE_POWER_FRACTION = 0.2  # [G] idle board power / TDP (an idle H100 in P0 reads ~140-145 W of 700 W)
COPY_ACTIVITY = 0.25  # [G] activity of a copy engine running alone, as a fraction of full compute load

AMBIENT_C = 25.0  # [G] inlet air temperature
RISE_AT_TDP_C = 50.0  # [G] steady-state rise above ambient at TDP; thermal resistance = this / TDP
THERMAL_TAU_S = 30.0  # [G] thermal time constant of die + heatsink

IDLE_SM_CLOCK_MHZ = 210.0  # idle SM clock nvidia-smi shows on Ampere; a guess for the other parts [G]

# HBM interface width in bits (1024 per stack) by catalogue name, to derive the memory clock.
HBM_BUS_BITS: dict[str, int] = {"a100": 5120, "h100": 5120, "h200": 6144, "mi300x": 8192}
DEFAULT_HBM_BUS_BITS = 5120  # [G] five stacks, for catalogue entries not listed above
# Data transfers per reported memory clock: nvidia-smi reports half the per-pin rate, rocm-smi a quarter.
TRANSFERS_PER_MEMORY_CLOCK: dict[str, int] = {"nvidia": 2, "amd": 4}

COMPUTE_ENGINE = "compute"


@dataclass(frozen=True)
class TelemetrySample:
    """One reading, as nvidia-smi / rocm-smi would show it, of the window ending at `timestamp`."""

    timestamp: float  # modeled device seconds the sample describes
    sm_clock_mhz: float
    memory_clock_mhz: float  # derived from HBM bandwidth and bus width (docs/telemetry.md)
    power_w: float  # average over the window
    temperature_c: float
    utilization_gpu: float  # percent 0-100: compute engine busy fraction over the window
    utilization_memory_copy: float  # percent 0-100: any copy (DMA) engine busy, fraction of the window
    memory_used: int  # bytes, passed in by the caller
    memory_total: int  # spec.hbm_bytes
    power_limit_w: float  # spec.tdp_watts


def memory_clock_mhz(spec: GPUSpec) -> float:
    """The memory clock a vendor tool reports: bandwidth / (bus bytes x transfers per clock), whole MHz.

    Example:
        >>> from strata.hw.catalog import get_spec
        >>> memory_clock_mhz(get_spec("a100")), memory_clock_mhz(get_spec("mi300x"))
        (1593.0, 1294.0)
    """
    bus_bytes = HBM_BUS_BITS.get(spec.name, DEFAULT_HBM_BUS_BITS) / 8
    transfers = TRANSFERS_PER_MEMORY_CLOCK.get(spec.vendor, 2)
    return float(round(spec.hbm_bandwidth / bus_bytes / transfers / 1e6))


class Telemetry:
    """Busy intervals of a device's engines in, smi-style samples out.

    Utilization is busy time in [now - WINDOW_S, now] over WINDOW_S. Power is the window average of
    idle + (TDP - idle) x activity, where activity is 1 while the compute engine is busy,
    COPY_ACTIVITY while only copy engines are, 0 otherwise. Temperature follows
    dT/dt = (AMBIENT_C + R x P(t) - T) / THERMAL_TAU_S, integrated exactly over the piecewise-constant
    power, from the idle steady state at t = 0. Sampling reads state and never changes it.

    Example:
        >>> from strata.hw.catalog import get_spec
        >>> tel = Telemetry(get_spec("h100"))
        >>> idle = tel.sample()
        >>> idle.utilization_gpu, idle.sm_clock_mhz, round(idle.power_w), round(idle.temperature_c, 1)
        (0.0, 210.0, 140, 35.0)
        >>> tel.record_busy("compute", 0.0, Telemetry.WINDOW_S)  # one kernel filling the window
        >>> busy = tel.sample(memory_used=1 << 30)
        >>> busy.utilization_gpu, busy.sm_clock_mhz, round(busy.power_w), busy.memory_used
        (100.0, 1980.0, 700, 1073741824)
        >>> busy.temperature_c > idle.temperature_c
        True
    """

    WINDOW_S: float = WINDOW_S

    def __init__(self, spec: GPUSpec) -> None:
        if spec.tdp_watts <= 0:
            raise ValueError(f"[telemetry] spec.tdp_watts must be > 0, got {spec.tdp_watts} for {spec.name}")
        self.spec = spec
        self._idle_w = IDLE_POWER_FRACTION * spec.tdp_watts
        self._r_th = RISE_AT_TDP_C / spec.tdp_watts  # K/W
        self._memory_clock_mhz = memory_clock_mhz(spec)
        self._lock = threading.Lock()
        self._compute = _IntervalSet()
        self._copy = _IntervalSet()  # union of all copy engines
        self._latest = 0.0
        self._folded_to = 0.0  # history before this time is folded into _temp_c and dropped
        self._temp_c = self._steady_c(self._idle_w)

    def record_busy(self, engine: str, start: float, end: float) -> None:
        """Record that `engine` was busy over modeled time [start, end).

        Thread-safe (called from device threads). Any name other than 'compute' is a copy engine
        ('dma0', 'dma1', 'sdma0', ...). Work older than the kept history (at least two windows behind
        the latest time seen) arrives too late: only its part inside the history counts.

        Args:
            engine: 'compute' or a copy engine name.
            start: modeled seconds, >= 0.
            end: modeled seconds, >= start.
        Raises:
            ValueError: the engine name is empty, or the times are not finite, negative or reversed.
        """
        if not engine:
            raise ValueError("[telemetry] record_busy engine must be 'compute' or a copy engine name, got ''")
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end < start:
            raise ValueError(f"[telemetry] record_busy needs finite 0 <= start <= end, got start={start}, end={end}")
        target = self._compute if engine == COMPUTE_ENGINE else self._copy
        with self._lock:
            start = max(start, self._folded_to)
            if end > start:
                target.add(start, end)
            if end > self._latest:
                self._latest = end
                if end - HISTORY_S >= self._folded_to + FOLD_STEP_S:
                    self._fold(end - HISTORY_S)

    def sample(self, memory_used: int = 0, now: float | None = None) -> TelemetrySample:
        """Read the device as of modeled time `now` (default: the latest modeled time seen).

        Args:
            memory_used: bytes of device memory in use, reported as given.
            now: modeled seconds; at least the latest time seen minus WINDOW_S.
        Returns:
            A `TelemetrySample` describing the window [now - WINDOW_S, now].
        Raises:
            ValueError: memory_used is outside [0, hbm_bytes], or `now` reaches back past the kept history.
        """
        if not 0 <= memory_used <= self.spec.hbm_bytes:
            raise ValueError(f"[telemetry] memory_used must be in [0, {self.spec.hbm_bytes}], got {memory_used}")
        # A snapshot under the lock, the arithmetic outside it: the walk over the window is O(intervals) in
        # Python, and holding the lock for it let a sampling loop starve the engines' record_busy calls.
        with self._lock:
            if now is None:
                now = self._latest
            if not math.isfinite(now) or now < 0:
                raise ValueError(f"[telemetry] sample now must be finite and >= 0, got {now}")
            if self._folded_to > 0 and now - WINDOW_S < self._folded_to:
                raise ValueError(f"[telemetry] sample now must be >= {self._folded_to + WINDOW_S} (history before "
                                 f"{self._folded_to} s is dropped; latest time seen {self._latest}), got {now}")
            compute_set, copy_set = self._compute.copy(), self._copy.copy()
            temp0, folded_to = self._temp_c, self._folded_to
        compute_s = copy_s = energy_j = 0.0
        for dt, compute, copy in _segments(compute_set, copy_set, now - WINDOW_S, now):
            compute_s += dt if compute else 0.0
            copy_s += dt if copy else 0.0
            energy_j += dt * self._power_w(compute, copy)
        temp_c = self._advance(temp0, folded_to, now, compute_set, copy_set)
        busy = compute_s > 0 or copy_s > 0
        return TelemetrySample(
            timestamp=now,
            sm_clock_mhz=self.spec.clock_mhz if busy else IDLE_SM_CLOCK_MHZ,
            memory_clock_mhz=self._memory_clock_mhz,
            power_w=energy_j / WINDOW_S,
            temperature_c=temp_c,
            utilization_gpu=100.0 * (compute_s / WINDOW_S),
            utilization_memory_copy=100.0 * (copy_s / WINDOW_S),
            memory_used=memory_used,
            memory_total=self.spec.hbm_bytes,
            power_limit_w=self.spec.tdp_watts,
        )

    def reset(self) -> None:
        """Forget all recorded work: back to an idle device at t = 0, at its idle steady temperature."""
        with self._lock:
            self._compute = _IntervalSet()
            self._copy = _IntervalSet()
            self._latest = 0.0
            self._folded_to = 0.0
            self._temp_c = self._steady_c(self._idle_w)

    # -- model (callers hold the lock)
    def _power_w(self, compute: bool, copy: bool) -> float:
        activity = 1.0 if compute else COPY_ACTIVITY if copy else 0.0
        return self._idle_w + (self.spec.tdp_watts - self._idle_w) * activity

    def _steady_c(self, power_w: float) -> float:
        return AMBIENT_C + self._r_th * power_w

    def _advance(self, temp_c: float, t0: float, t1: float, compute_set: _IntervalSet,
                 copy_set: _IntervalSet) -> float:
        """Temperature at t1 from temp_c at t0: exact exponential approach over each constant-power piece."""
        for dt, compute, copy in _segments(compute_set, copy_set, t0, t1):
            steady = self._steady_c(self._power_w(compute, copy))
            temp_c = steady + (temp_c - steady) * math.exp(-dt / THERMAL_TAU_S)
        return temp_c

    def _fold(self, cutoff: float) -> None:
        """Fold history before `cutoff` into the temperature, then drop the intervals that ended by it."""
        self._temp_c = self._advance(self._temp_c, self._folded_to, cutoff, self._compute, self._copy)
        self._folded_to = cutoff
        self._compute.drop_before(cutoff)
        self._copy.drop_before(cutoff)



def _segments(compute: _IntervalSet, copy: _IntervalSet, t0: float, t1: float) -> Iterator[tuple[float, bool, bool]]:
    """(duration, compute busy, copy busy) for the constant-state pieces of [t0, t1] (idle before t = 0)."""
    if t1 <= t0:
        return
    cuts = sorted({t0, t1, *compute.edges(t0, t1), *copy.edges(t0, t1)})
    for a, b in zip(cuts, cuts[1:]):
        yield b - a, compute.covers(a), copy.covers(a)


class _IntervalSet:
    """Sorted, disjoint, non-touching half-open intervals [start, end); adding merges overlaps and neighbours."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def __len__(self) -> int:
        return len(self.starts)

    def copy(self) -> _IntervalSet:
        twin = _IntervalSet()
        twin.starts, twin.ends = self.starts[:], self.ends[:]
        return twin

    def add(self, start: float, end: float) -> None:
        lo = bisect_left(self.ends, start)  # first interval ending at or after start (touching merges)
        hi = bisect_right(self.starts, end)  # first interval starting after end
        if lo < hi:
            start = min(start, self.starts[lo])
            end = max(end, self.ends[hi - 1])
        self.starts[lo:hi] = [start]
        self.ends[lo:hi] = [end]

    def covers(self, t: float) -> bool:
        i = bisect_right(self.starts, t) - 1
        return i >= 0 and self.ends[i] > t

    def edges(self, t0: float, t1: float) -> Iterator[float]:
        """Interval starts and ends strictly inside (t0, t1)."""
        for i in range(bisect_right(self.ends, t0), bisect_left(self.starts, t1)):
            for x in (self.starts[i], self.ends[i]):
                if t0 < x < t1:
                    yield x

    def drop_before(self, t: float) -> None:
        k = bisect_right(self.ends, t)
        del self.starts[:k]
        del self.ends[:k]
