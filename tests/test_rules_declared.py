"""What each game tells the live table, asked of the rules directly (issue 17).

The engine, voice and scoreboard only ever ask the game: what to say before a round (deal,
last round, sudden death, eliminations), what to say after one, how to pace the table, what
the next call is, who races, the judge panel's questions, the box's defaults. These were only
reached through the engine and the browser; here each answer is checked at the rules, where a
wrong one is cheap to see.
"""

from __future__ import annotations

from referee.events import Cue, Facts, Penalty, Press, Ruling
from referee.rules.declare import Call, Schedule
from referee.rules.pig import Pig
from referee.rules.pigstail import PigsTail
from referee.rules.spank import SpankThePig, Why

FOUR = ("Blue", "Red", "Green", "Yellow")
THREE = ("Blue", "Red", "Green")
MS = 1000
S = 1_000_000


def slaps(rules: SpankThePig, cue_us: int, order: tuple[str, ...], gap_ms: int = 100) -> None:
    rules.advance(cue_us)
    rules.feed(Cue(cue_us))
    for i, seat in enumerate(order):
        t = cue_us + (i + 1) * gap_ms * MS
        rules.advance(t)
        rules.feed(Press(t, seat))
    rules.advance(cue_us + 3 * S)


# -- Spank the Pig! -------------------------------------------------------------------------------


def test_spank_says_how_to_deal_and_when_the_last_round_comes() -> None:
    rules = SpankThePig(THREE, {"deck": 10})  # 3 rounds, 1 card aside
    assert rules.planned_rounds() == 3
    assert rules.announcements(1) == [("deal", {"cards": 3, "aside_cards": 1})]
    assert rules.announcements(2) == []
    assert rules.announcements(3) == [("last_round", {})]
    one = SpankThePig(("Blue", "Red"), {"deck": 3})  # one round: the first is also the last
    assert one.announcements(1) == [("deal", {"cards": 1, "aside_cards": 1}),
                                    ("last_round", {})]


def test_spank_announces_sudden_death_with_the_tied_leaders_only() -> None:
    rules = SpankThePig(THREE, {"deck": 3, "doubles": "off"})
    assert rules.active_seats() == THREE
    slaps(rules, 1 * S, ("Blue", "Red", "Green"))  # Green last: Blue and Red tied
    assert rules.active_seats() == ("Blue", "Red")
    assert rules.announcements(2) == [("sudden_death", {"seats": "Blue, Red"})]
    slaps(rules, 5 * S, ("Red", "Blue"))
    assert rules.over and rules.standings().winners == ("Red",)


def test_spank_announces_sudden_death_again_after_a_knock_out() -> None:
    rules = SpankThePig(FOUR, {"deck": 4, "doubles": "off"})
    slaps(rules, 1 * S, ("Blue", "Red", "Yellow", "Green"))  # three tied leaders
    assert rules.announcements(2) == [("sudden_death", {"seats": "Blue, Red, Yellow"})]
    slaps(rules, 5 * S, ("Blue", "Red", "Yellow"))  # Yellow out
    assert rules.racing(2) == ("Blue", "Red", "Yellow")
    assert rules.announcements(3) == [("sudden_death", {"seats": "Blue, Red"})]
    assert rules.next_call() == Call("spank")


def test_spank_says_a_clean_round_once_and_how_many_cards_a_double_taker_takes() -> None:
    rules = SpankThePig(FOUR, {"doubles": "buttons"})
    rules.feed(Cue(1 * S))
    rules.advance(4 * S + 1)
    assert rules.round_outputs(1) == []
    assert rules.said_after(1, [], True) == [("nobody", {})]
    assert rules.said_after(1, [], False) == []
    new = [Ruling(1, "Blue", 1, Why.LAST_TO_THE_PIG), Ruling(1, "Red", 1, Why.LAST_TO_THE_DOUBLE),
           Ruling(1, "Blue", 2, Why.LAST_TO_THE_DOUBLES), Ruling(1, "Green", -1, Why.FIRST_TO_A_PIG),
           Ruling(1, "Green", 1, Why.SLAP_EARLY)]
    # several whammies in one round for one seat: say how many face-up cards to take
    assert rules.said_after(1, new, False) == [("take_cards", {"seat": "Blue", "n": 3})]


def test_spank_paces_the_table_by_its_options() -> None:
    rules = SpankThePig(FOUR, {"tempo_ms": 700, "pause_ms": 2500})
    assert rules.schedule() == Schedule(tempo_ms=700, pause_ms=2500, quiet_rounds=6)


def test_spank_box_defaults_follow_the_seeds_advice() -> None:
    assert SpankThePig.box_defaults(4, True) == {"doubles": "buttons"}
    assert SpankThePig.box_defaults(4, False) == {"doubles": "judge"}
    assert SpankThePig.box_defaults(5, True) == {"doubles": "off"}
    assert SpankThePig.box_defaults(2, True) == {"doubles": "buttons"}


def test_spank_judge_panel_asks_about_doubles_only_when_the_buttons_race_on_them() -> None:
    assert [f.name for f in SpankThePig(FOUR, {"doubles": "buttons"}).panel_facts()] == \
        ["pigs", "doubles", "void"]
    for doubles in ("judge", "off"):
        assert [f.name for f in SpankThePig(FOUR, {"doubles": doubles}).panel_facts()] == \
            ["pigs", "void"]


def test_spank_next_call_waits_for_the_race_and_stops_at_the_end() -> None:
    rules = SpankThePig(("Blue", "Red"), {"deck": 2, "doubles": "off"})
    assert rules.next_call() == Call("spank")
    rules.feed(Cue(1 * S))
    rules.advance(1 * S + 100 * MS)
    assert rules.next_call() is None  # the race is open
    status = rules.status()
    assert (status.round, status.race_open, status.closes_at_us) == (1, True, 4 * S)
    rules.feed(Press(1 * S + 100 * MS, "Blue"))
    rules.advance(1 * S + 200 * MS)
    assert rules.pressers(1) == frozenset({"Blue"})
    rules.feed(Press(1 * S + 200 * MS, "Red"))
    rules.advance(1 * S + 201 * MS)
    assert not rules.status().race_open and rules.status().over
    assert rules.next_call() is None  # Blue won: no more calls


def test_spank_status_names_the_round_waiting_for_the_judge() -> None:
    rules = SpankThePig(FOUR, {"doubles": "off"})
    slaps(rules, 1 * S, ("Blue", "Red"))  # some slapped: pig or no pig?
    slaps(rules, 6 * S, ("Blue", "Red"))
    status = rules.status()
    assert status.awaiting is not None and status.awaiting.round == 1
    assert status.round == 2 and not status.over
    rules.feed(Facts(1, {"pigs": 0}))
    assert rules.status().awaiting is not None and rules.status().awaiting.round == 2


def test_spank_reactions_and_pressers_are_per_button() -> None:
    rules = SpankThePig(FOUR, {"doubles": "buttons"})
    rules.feed(Cue(1 * S))
    rules.advance(1 * S + 300 * MS)
    rules.feed(Press(1 * S + 120 * MS, "Red"))
    rules.feed(Press(1 * S + 250 * MS, "Blue", "double"))
    assert rules.reactions(1) == {"Red": 120 * MS}
    assert rules.pressers(1, "slap") == frozenset({"Red"})
    assert rules.pressers(1, "double") == frozenset({"Blue"})


# -- Pig ------------------------------------------------------------------------------------------


def test_pig_is_silent_and_paced_by_its_pass_beat() -> None:
    rules = Pig(FOUR, {"pass_beat_ms": 1500, "pause_ms": 3000})
    assert rules.schedule() == Schedule(pause_ms=3000, silent=True, beat_ms=1500, beat="pass")
    assert rules.next_call() is None


def test_pig_status_while_a_claim_is_open_and_after() -> None:
    rules = Pig(FOUR, {"window_ms": 2000})
    rules.feed(Press(1 * S, "Blue"))
    rules.advance(1 * S + 100 * MS)
    status = rules.status()
    assert (status.round, status.race_open, status.closes_at_us, status.over) == \
        (1, True, 3 * S, False)
    assert rules.opened_by(1) == (1 * S, "Blue")
    rules.feed(Press(1 * S + 200 * MS, "Red"))
    rules.feed(Press(1 * S + 300 * MS, "Green"))
    rules.advance(1 * S + 300 * MS)
    assert rules.status().closes_at_us == 1 * S + 301 * MS  # decided tie_us after the third
    assert rules.reactions(1) == {"Blue": 0, "Red": 200 * MS, "Green": 300 * MS}
    rules.advance(3 * S)
    assert rules.status().race_open is False and rules.status().closes_at_us is None


def test_pig_announces_lives_and_eliminations_after_the_round_is_ruled() -> None:
    rules = Pig(FOUR, {"lives": 3})
    assert rules.announcements(1)[0] == ("deal_sets", {"sets": 4})
    for i, seat in enumerate(("Blue", "Red", "Green")):
        rules.advance(1 * S + i * 100 * MS)
        rules.feed(Press(1 * S + i * 100 * MS, seat))
    assert rules.announcements(2) == []  # not ruled yet: a claim is never announced
    rules.advance(2 * S)
    assert rules.announcements(2) == [("lives", {"seat": "Yellow", "lost": 1, "left": 2})]
    rules.feed(Penalty(1, "Yellow", 2, "peeked"))
    assert rules.announcements(2) == [("eliminated", {"seat": "Yellow", "rank_index": 3})]
    assert rules.words({"Yellow": 3, "Red": 1})["letters"] == {"Yellow": "P-I-G", "Red": "P"}


def test_pig_one_life_an_elimination_says_which_set_leaves() -> None:
    rules = Pig(FOUR)
    for i, seat in enumerate(("Blue", "Red", "Green")):
        rules.advance(1 * S + i * 100 * MS)
        rules.feed(Press(1 * S + i * 100 * MS, seat))
    rules.advance(2 * S)
    assert rules.announcements(2) == [("eliminated", {"seat": "Yellow", "rank_index": 3})]
    assert rules.racing(1) == FOUR
    for i, seat in enumerate(("Red", "Green")):
        rules.advance(30 * S + i * 100 * MS)
        rules.feed(Press(30 * S + i * 100 * MS, seat))
    rules.advance(31 * S)
    assert rules.racing(2) == ("Blue", "Red", "Green")
    assert rules.announcements(3) == [("eliminated", {"seat": "Blue", "rank_index": 2})]
    assert rules.status().over


# -- Pig's Tail -----------------------------------------------------------------------------------


def test_pigs_tail_paces_the_turns_and_lays_out_the_ring_first() -> None:
    rules = PigsTail(THREE, {"turn_ms": 3000, "tempo_ms": 300, "pause_ms": 1000})
    assert rules.schedule() == Schedule(tempo_ms=300, pause_ms=1000, turn_ms=3000, quiet_rounds=3)
    assert rules.announcements(1) == [("deal_ring", {})]
    assert rules.announcements(2) == []


def test_pigs_tail_questions_only_when_the_slowest_race() -> None:
    assert PigsTail(THREE, {"take": "flipper"}).questions() == []
    assert [f.name for group in PigsTail(THREE, {"take": "slowest"}).questions() for f in group] \
        == ["match"]


def test_pigs_tail_racing_and_refutable_claims() -> None:
    rules = PigsTail(THREE)
    rules.feed(Cue(4 * S, "Blue"))
    rules.feed(Cue(8 * S, "Red"))
    rules.advance(8 * S + 100 * MS)
    rules.feed(Press(8 * S + 100 * MS, "Red"))
    assert rules.racing(2) == ("Red",)
    assert rules.refutable(2) is not None and rules.refutable(2).name == "match"
    assert rules.refutable(1) is None  # nobody claimed
    rules.feed(Facts(2, {"match": True}))
    assert rules.refutable(2) is None  # the judge has said
    slowest = PigsTail(THREE, {"take": "slowest"})
    slowest.feed(Cue(4 * S, "Blue"))
    slowest.advance(4 * S + 100 * MS)
    slowest.feed(Press(4 * S + 100 * MS, "Blue"))
    assert slowest.racing(1) == THREE and slowest.refutable(1) is None


def test_pigs_tail_status_while_a_flip_is_open_and_awaiting() -> None:
    rules = PigsTail(THREE, {"take": "slowest"})
    rules.feed(Cue(4 * S, "Blue"))
    rules.feed(Cue(8 * S, "Red"))
    rules.advance(8 * S + 100 * MS)
    rules.feed(Press(8 * S + 100 * MS, "Green"))
    status = rules.status()
    assert (status.round, status.race_open, status.closes_at_us) == (2, True, 11 * S)
    assert rules.next_call() is None
    rules.advance(11 * S)
    status = rules.status()
    assert status.awaiting is not None and status.awaiting.round == 2 and not status.race_open
    assert rules.next_call() == Call("turn", "Green")
