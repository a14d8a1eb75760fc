"""The stop-signal rule: repeats within the window are one request; a late one forces."""

from __future__ import annotations

from gateway.signals import REPEAT_WINDOW_SECONDS, StopRequests


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_repeats_within_the_window_are_one_request_and_a_late_one_forces():
    clock = FakeMonotonic()
    requests = StopRequests(monotonic=clock)
    assert requests.on_signal() == StopRequests.STOP
    clock.now += 0.01  # make forwarding the group's SIGTERM
    assert requests.on_signal() == StopRequests.REPEAT
    clock.now += REPEAT_WINDOW_SECONDS - 0.01
    assert requests.on_signal() == StopRequests.REPEAT
    clock.now += 0.5
    assert requests.on_signal() == StopRequests.FORCE
