"""L1 telemetry model: utilization, power, clocks and temperature from busy intervals on modeled time."""

import math
import threading

import pytest

from strata.driver import telemetry as tm
from strata.driver.telemetry import Telemetry, TelemetrySample
from strata.hw.catalog import get_spec

W = Telemetry.WINDOW_S
MODELS = ["h100", "h200", "a100", "mi300x"]


def union_length(intervals: list[tuple[float, float]], t0: float, t1: float) -> float:
    """Oracle: length of the union of `intervals` clipped to [t0, t1], by sorting and sweeping."""
    total, reach = 0.0, t0
    for s, e in sorted(intervals):
        s, e = max(s, reach), min(e, t1)
        if e > s:
            total += e - s
            reach = e
    return total


def idle_power(tdp: float) -> float:
    return tm.IDLE_POWER_FRACTION * tdp


def steady_c(tdp: float, power_w: float) -> float:
    return tm.AMBIENT_C + tm.RISE_AT_TDP_C / tdp * power_w


@pytest.mark.parametrize("model", MODELS)
def test_idle_device_reports_idle_power_clock_and_steady_temperature(model: str) -> None:
    spec = get_spec(model)
    s = Telemetry(spec).sample()
    assert isinstance(s, TelemetrySample)
    assert s.timestamp == 0.0
    assert s.utilization_gpu == 0.0 and s.utilization_memory_copy == 0.0
    assert s.sm_clock_mhz == tm.IDLE_SM_CLOCK_MHZ
    assert s.power_w == pytest.approx(idle_power(spec.tdp_watts))
    assert s.temperature_c == pytest.approx(steady_c(spec.tdp_watts, idle_power(spec.tdp_watts)))
    assert s.memory_total == spec.hbm_bytes and s.memory_used == 0
    assert s.power_limit_w == spec.tdp_watts
    assert s.memory_clock_mhz == tm.memory_clock_mhz(spec)


def test_memory_clock_is_bandwidth_over_bus_and_transfer_rate() -> None:
    # Oracle: bytes/s / (bus bits / 8) / transfers per clock, in MHz.
    expected = {"a100": 2.039e12 / 640 / 2, "h100": 3.35e12 / 640 / 2, "h200": 4.8e12 / 768 / 2,
                "mi300x": 5.3e12 / 1024 / 4}
    for model, hz in expected.items():
        assert tm.memory_clock_mhz(get_spec(model)) == round(hz / 1e6)


def test_device_goes_idle_once_work_leaves_the_window() -> None:
    spec = get_spec("h100")
    tel = Telemetry(spec)
    tel.record_busy("compute", 0.0, 0.01)
    tel.record_busy("dma0", 0.0, 0.01)
    s = tel.sample(now=0.01 + W)
    assert s.utilization_gpu == 0.0 and s.utilization_memory_copy == 0.0
    assert s.sm_clock_mhz == tm.IDLE_SM_CLOCK_MHZ
    assert s.power_w == pytest.approx(idle_power(spec.tdp_watts))


@pytest.mark.parametrize("model", MODELS)
def test_fully_busy_window_reports_100_percent_and_tdp(model: str) -> None:
    spec = get_spec(model)
    tel = Telemetry(spec)
    tel.record_busy("compute", 0.0, 3 * W)
    s = tel.sample(memory_used=123)
    assert s.timestamp == 3 * W
    assert s.utilization_gpu == pytest.approx(100.0)
    assert s.utilization_memory_copy == 0.0
    assert s.power_w == pytest.approx(spec.tdp_watts)
    assert s.sm_clock_mhz == spec.clock_mhz
    assert s.memory_used == 123


def test_copy_engine_alone_draws_its_documented_share() -> None:
    spec = get_spec("a100")
    tel = Telemetry(spec)
    tel.record_busy("dma1", 0.0, 2 * W)
    s = tel.sample()
    idle = idle_power(spec.tdp_watts)
    assert s.utilization_memory_copy == pytest.approx(100.0)
    assert s.utilization_gpu == 0.0
    assert s.power_w == pytest.approx(idle + (spec.tdp_watts - idle) * tm.COPY_ACTIVITY)
    assert s.sm_clock_mhz == spec.clock_mhz


@pytest.mark.parametrize("now", [W, 1.5 * W, 2.0])
def test_partial_intervals_give_the_exact_fraction(now: float) -> None:
    spec = get_spec("h200")
    tel = Telemetry(spec)
    t0 = now - W
    # Some inside the window, one straddling each edge, one wholly before it; copy overlaps compute in part.
    compute = [(t0 - 0.3 * W, t0 + 0.1 * W), (t0 + 0.2 * W, t0 + 0.25 * W), (t0 + 0.5 * W, t0 + 0.55 * W),
               (t0 + 0.9 * W, now + 0.5 * W)]
    copy = [(t0 - 0.5 * W, t0 - 0.4 * W), (t0 + 0.22 * W, t0 + 0.4 * W), (t0 + 0.7 * W, t0 + 0.8 * W)]
    compute = [(max(s, 0.0), e) for s, e in compute if e > 0]
    copy = [(max(s, 0.0), e) for s, e in copy if e > 0]
    for s, e in compute:
        tel.record_busy("compute", s, e)
    for s, e in copy:
        tel.record_busy("dma0", s, e)
    sample = tel.sample(now=now)

    c = union_length(compute, t0, now)
    m = union_length(copy, t0, now)
    both = c + m - union_length(compute + copy, t0, now)
    assert sample.utilization_gpu == pytest.approx(100.0 * c / W)
    assert sample.utilization_memory_copy == pytest.approx(100.0 * m / W)
    idle = idle_power(spec.tdp_watts)
    activity = (c + tm.COPY_ACTIVITY * (m - both)) / W
    assert sample.power_w == pytest.approx(idle + (spec.tdp_watts - idle) * activity)


def test_overlapping_and_repeated_intervals_are_not_double_counted() -> None:
    tel = Telemetry(get_spec("h100"))
    compute = [(0.0, 0.4 * W), (0.2 * W, 0.6 * W), (0.1 * W, 0.3 * W), (0.0, 0.4 * W)]
    for s, e in compute:
        tel.record_busy("compute", s, e)
    # Two copy engines busy at once count once: "a copy engine was busy".
    tel.record_busy("dma0", 0.0, 0.5 * W)
    tel.record_busy("dma1", 0.25 * W, 0.75 * W)
    s = tel.sample(now=W)
    assert s.utilization_gpu == pytest.approx(60.0)
    assert s.utilization_memory_copy == pytest.approx(75.0)
    assert len(tel._compute) == 1 and len(tel._copy) == 1


def test_adjacent_intervals_merge() -> None:
    tel = Telemetry(get_spec("h100"))
    for i in range(100):
        tel.record_busy("compute", i * W / 100, (i + 1) * W / 100)
    assert len(tel._compute) == 1
    assert tel.sample().utilization_gpu == pytest.approx(100.0)


def test_temperature_rises_monotonically_to_steady_state_and_never_exceeds_it() -> None:
    spec = get_spec("mi300x")
    tel = Telemetry(spec)
    t_idle = steady_c(spec.tdp_watts, idle_power(spec.tdp_watts))
    t_full = steady_c(spec.tdp_watts, spec.tdp_watts)
    temps = [tel.sample().temperature_c]
    t, step = 0.0, 0.5
    while t < 10 * tm.THERMAL_TAU_S:
        tel.record_busy("compute", t, t + step)
        t += step
        s = tel.sample()
        # Oracle: first-order step response from the idle steady state.
        assert s.temperature_c == pytest.approx(t_full + (t_idle - t_full) * math.exp(-t / tm.THERMAL_TAU_S))
        temps.append(s.temperature_c)
    assert all(b >= a for a, b in zip(temps, temps[1:]))
    assert all(x <= t_full for x in temps)
    assert temps[-1] == pytest.approx(t_full, abs=0.01)


def test_cooling_after_load_approaches_idle_steady_state() -> None:
    spec = get_spec("h100")
    tel = Telemetry(spec)
    tel.record_busy("compute", 0.0, 60.0)
    hot = tel.sample().temperature_c
    later = [tel.sample(now=60.0 + k).temperature_c for k in (1.0, 10.0, 100.0, 1000.0)]
    assert all(b < a for a, b in zip([hot, *later], later))
    assert later[-1] == pytest.approx(steady_c(spec.tdp_watts, idle_power(spec.tdp_watts)))


def test_sampling_changes_nothing() -> None:
    spec = get_spec("h100")
    busy = [(i * 0.3, i * 0.3 + 0.1) for i in range(200)]
    often, never = Telemetry(spec), Telemetry(spec)
    for s, e in busy:
        often.record_busy("compute", s, e)
        never.record_busy("compute", s, e)
        often.sample()
        often.sample()
    assert often.sample() == often.sample() == never.sample()


def test_old_intervals_are_pruned_and_memory_stays_bounded() -> None:
    tel = Telemetry(get_spec("h100"))
    spacing, width = 1e-3, 4e-4
    n = 100_000
    for i in range(n):
        tel.record_busy("compute", i * spacing, i * spacing + width)
        tel.record_busy("dma0", i * spacing + width / 2, i * spacing + 2 * width)
    held = len(tel._compute) + len(tel._copy)
    assert held <= 2 * (math.ceil((tm.HISTORY_S + tm.FOLD_STEP_S) / spacing) + 2)
    # What is kept still gives the exact answer for the last window.
    now = (n - 1) * spacing + 2 * width
    kept = [(i * spacing, i * spacing + width) for i in range(n - 400, n)]
    assert tel.sample().utilization_gpu == pytest.approx(100.0 * union_length(kept, now - W, now) / W)


def test_thread_safety_smoke() -> None:
    tel = Telemetry(get_spec("h100"))
    n_threads, per_thread = 8, 500
    d = W / (n_threads * per_thread)  # whole span = one window, so no record arrives too late
    errors: list[BaseException] = []
    readings: list[TelemetrySample] = []
    done = threading.Event()

    def worker(j: int) -> None:
        try:
            engine = "compute" if j % 2 == 0 else f"dma{j}"
            for i in range(per_thread):
                k = i * n_threads + j
                tel.record_busy(engine, k * d, (k + 1) * d)
        except BaseException as e:  # reported below
            errors.append(e)

    def sampler() -> None:
        try:
            while not done.is_set():
                readings.append(tel.sample())
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(j,)) for j in range(n_threads)]
    watcher = threading.Thread(target=sampler)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watcher.join()

    assert not errors
    assert readings and all(0.0 <= r.utilization_gpu <= 100.0 + 1e-9 for r in readings)
    s = tel.sample(now=W)
    # Even threads tile half of every d-slot pair onto compute, odd threads onto copy engines.
    assert s.utilization_gpu == pytest.approx(50.0)
    assert s.utilization_memory_copy == pytest.approx(50.0)


def test_reset_returns_to_idle() -> None:
    spec = get_spec("h100")
    tel = Telemetry(spec)
    tel.record_busy("compute", 0.0, 100.0)
    tel.reset()
    assert tel.sample() == Telemetry(spec).sample()


def test_errors_name_the_operation() -> None:
    tel = Telemetry(get_spec("h100"))
    with pytest.raises(ValueError, match=r"\[telemetry\] record_busy"):
        tel.record_busy("compute", 2.0, 1.0)
    with pytest.raises(ValueError, match=r"\[telemetry\] record_busy"):
        tel.record_busy("compute", -1.0, 1.0)
    with pytest.raises(ValueError, match=r"\[telemetry\] record_busy"):
        tel.record_busy("", 0.0, 1.0)
    with pytest.raises(ValueError, match=r"memory_used"):
        tel.sample(memory_used=-1)
    tel.record_busy("compute", 0.0, 10.0)
    with pytest.raises(ValueError, match=r"\[telemetry\] sample now"):
        tel.sample(now=1.0)
    assert tel.sample(now=10.0 - W).utilization_gpu == pytest.approx(100.0)
