"""Fair to every visitor: the run pool serves waiting visitors in turn and caps one visitor's jobs; reruns are capped
per client address as well as per session. Pure logic, no server (well under a second)."""

from __future__ import annotations

import threading

import pytest

from engine.limits import VisitorCaps
from ui.kit.run_pool import PoolRefusal, RunPool, Visitor

TABS = [Visitor(f"tab-{k}", "203.0.113.7") for k in range(6)]      # one visitor, six tabs, one address
OTHER = Visitor("other-tab", "198.51.100.9")


def test_another_visitors_run_is_served_before_the_many_tabs_of_one_visitor():
    pool = RunPool(capacity=2, caps=VisitorCaps(jobs_per_session=None, jobs_per_address=None))
    mine = [pool.join(1, tab) for tab in TABS]
    assert pool.try_start(mine[0]) and pool.try_start(mine[1])          # nobody else waits: both places are theirs
    theirs = pool.join(1, OTHER)
    assert pool.ahead(theirs) == 0, "the other visitor is next, not behind four queued tabs"
    assert [pool.ahead(t) for t in mine[2:]] == [1, 2, 3, 4]
    assert not pool.try_start(mine[2])                                   # no place is free yet
    pool.leave(mine[0])
    assert not pool.try_start(mine[2]) and pool.try_start(theirs)       # the freed place goes to the other visitor
    pool.leave(mine[1])
    assert pool.try_start(mine[2])                                       # then the tabs, in the order they came
    assert [pool.ahead(t) for t in mine[3:]] == [0, 1, 2]


def test_visitors_take_turns_when_both_have_many_jobs():
    pool = RunPool(capacity=1, caps=VisitorCaps(jobs_per_session=None, jobs_per_address=None))
    a = [pool.join(1, Visitor(f"a{k}", "203.0.113.1")) for k in range(3)]
    b = [pool.join(1, Visitor(f"b{k}", "203.0.113.2")) for k in range(3)]
    served, queued = [], a + b
    while queued:
        nxt = next(t for t in queued if pool.ahead(t) == 0)
        assert pool.try_start(nxt)
        queued.remove(nxt)
        served.append("a" if nxt in a else "b")
        pool.leave(nxt)
    assert served == ["a", "b", "a", "b", "a", "b"]


def test_jobs_without_a_visitor_keep_first_come_first_served():
    pool = RunPool(capacity=1)
    first, second, third = pool.join(), pool.join(), pool.join()
    assert [pool.ahead(t) for t in (first, second, third)] == [0, 1, 2]
    assert not pool.try_start(second) and pool.try_start(first)


def test_one_visitors_jobs_are_capped_per_tab_and_per_address_with_a_sentence():
    pool = RunPool(capacity=1, caps=VisitorCaps(jobs_per_session=2, jobs_per_address=4))
    tab = Visitor("tab", None)
    pool.join(1, tab), pool.join(1, tab)
    with pytest.raises(PoolRefusal) as refused:
        pool.join(1, tab)
    assert "from this tab" in str(refused.value) and "(2)" in str(refused.value)
    for k in range(4):
        pool.join(1, TABS[k])
    with pytest.raises(PoolRefusal) as refused:
        pool.join(1, TABS[4])
    sentence = str(refused.value)
    assert "from your network address" in sentence and "(4)" in sentence and sentence.endswith("press Run again.")
    pool.join(1, OTHER)                                     # another address is not capped by theirs


def test_a_job_outside_a_page_waits_for_its_place_and_gives_it_back():
    pool = RunPool(capacity=1)
    holder = pool.join(1, OTHER)
    assert pool.try_start(holder)
    entered = threading.Event()

    def build():
        with pool.held(TABS[0], poll=0.01):
            entered.set()

    thread = threading.Thread(target=build, daemon=True)
    thread.start()
    assert not entered.wait(0.2) and pool.waiting == 1     # queued while the place is held
    pool.leave(holder)
    assert entered.wait(10)
    thread.join(10)
    assert pool.running == 0 and pool.waiting == 0


def test_reruns_of_one_address_share_one_budget_and_other_addresses_do_not_wait():
    from ui.kit import reruns

    reruns._ADDRESSES.clear()  # noqa: SLF001
    now = 1000.0
    # A second's burst at most: 8 reruns at once, then one every 1/8 s.
    turns = [reruns.address_turn("203.0.113.7", now, 8.0) for _ in range(10)]
    assert turns[:8] == [0.0] * 8 and turns[8] == pytest.approx(0.125)
    assert reruns.address_turn("198.51.100.9", now, 8.0) == 0.0                # another visitor
    assert reruns.address_turn(None, now, 8.0) == 0.0                          # no address: the session's own cap
    assert reruns.address_turn("203.0.113.7", now + 0.125, 8.0) == 0.0       


def test_a_press_repeated_within_a_second_is_never_dropped_as_a_repeated_request():
    """Two presses of "Next" send the same request; a flood of identical requests without a press is one run."""
    from streamlit.proto.ClientState_pb2 import ClientState

    from ui.kit.reruns import _presses

    pressed, plain = ClientState(), ClientState()
    pressed.widget_states.widgets.add(id="next", trigger_value=True)
    plain.widget_states.widgets.add(id="slider", int_value=3)
    released = ClientState()
    released.widget_states.widgets.add(id="next", trigger_value=False)
    assert _presses(pressed) and not _presses(plain) and not _presses(released)
