"""What each game tells the live table, asked of the rules directly (issue 17).

The engine, voice and scoreboard only ever ask the game: what to say before a round (deal,
last round, sudden death, eliminations), what to say after one, how to pace the table, what
the next call is, who races, the judge panel's questions, the box's defaults. These were only
reached through the engine and the browser; here each answer is checked at the rules, where a
wrong one is cheap to see.
"""

from __future__ import annotations

from referee.events import Cue, Facts, Penalty, Press, Ruling
from referee.rules.declare import Call, RulesError, Schedule
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
    assert rules.announcements(1) == [("deal", {"cards": 3, "aside_cards": 1, "cards_said": "3 cards",
                                                "aside": "Set 1 card aside."})]
    assert rules.announcements(2) == []
    assert rules.announcements(3) == [("last_round", {})]
    one = SpankThePig(("Blue", "Red"), {"deck": 3})  # one round: the first is also the last
    assert one.announcements(1) == [("deal", {"cards": 1, "aside_cards": 1, "cards_said": "1 card",
                                              "aside": "Set 1 card aside."}),
                                    ("last_round", {})]


def test_spank_announces_sudden_death_with_the_tied_leaders_only() -> None:
    rules = SpankThePig(THREE, {"deck": 3, "doubles": "off"})
    assert rules.active_seats() == THREE
    slaps(rules, 1 * S, ("Blue", "Red", "Green"))  # Green last: Blue and Red tied
    assert rules.active_seats() == ("Blue", "Red")
    assert rules.announcements(2) == [("sudden_death", {"seats": ["Blue", "Red"]})]
    slaps(rules, 5 * S, ("Red", "Blue"))
    assert rules.over and rules.standings().winners == ("Red",)


def test_spank_announces_sudden_death_again_after_a_knock_out() -> None:
    rules = SpankThePig(FOUR, {"deck": 4, "doubles": "off"})
    slaps(rules, 1 * S, ("Blue", "Red", "Yellow", "Green"))  # three tied leaders
    assert rules.announcements(2) == [("sudden_death", {"seats": ["Blue", "Red", "Yellow"]})]
    slaps(rules, 5 * S, ("Blue", "Red", "Yellow"))  # Yellow out
    assert rules.racing(2) == ("Blue", "Red", "Yellow")
    assert rules.announcements(3) == [("sudden_death", {"seats": ["Blue", "Red"]})]
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
    # the quiet threshold from the odds of four seats' cards holding no pig (tests/test_games_quiet_odds.py)
    assert rules.schedule() == Schedule(tempo_ms=700, pause_ms=2500, quiet_rounds=10)


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
    assert rules.announcements(1)[0] == ("deal_sets", {"sets": 4, "ranks": [
        "aces", "twos", "threes", "fours"]})
    for i, seat in enumerate(("Blue", "Red", "Green")):
        rules.advance(1 * S + i * 100 * MS)
        rules.feed(Press(1 * S + i * 100 * MS, seat))
    assert rules.announcements(2) == []  # not ruled yet: a claim is never announced
    rules.advance(2 * S)
    assert rules.announcements(2) == [("lives", {"seat": "Yellow", "lost": 1, "left": 2,
                                                 "letter": "P"})]
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
    # 21 flips without a match: under 1 honest game in 100 (tests/test_games_quiet_odds.py)
    assert rules.schedule() == Schedule(tempo_ms=300, pause_ms=1000, turn_ms=3000,
                                        quiet_rounds=21)
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


def test_pig_refuses_a_cue_and_says_what_to_do() -> None:
    rules = Pig(FOUR)
    try:
        rules.feed(Cue(1 * S))
    except RulesError as exc:
        assert str(exc) == "pig has no cues: a claim is a press; remove the cue line"
    else:
        raise AssertionError("a cue in pig was taken")


def test_pig_no_race_is_open_once_the_game_is_finished() -> None:
    """Ending the game (the end of a log, or the judge ending it) closes the open claim at once,
    whatever is left of its window."""
    rules = Pig(FOUR)
    assert rules.status().race_open is False and rules.status().round == 0
    rules.feed(Press(1 * S, "Blue"))
    rules.advance(2 * S)
    assert rules.status().race_open is True
    rules.finish()
    status = rules.status()
    assert status.race_open is False and status.closes_at_us is None
    assert rules.round_outputs(1)[0].reason.value.startswith("unclear")


def test_spank_before_the_first_cue_everyone_is_at_zero_and_plays() -> None:
    rules = SpankThePig(("Blue", "Red"), {"deck": 2})  # one round: the next is sudden death
    assert rules.active_seats() == ("Blue", "Red")
    standings = rules.standings()
    assert not standings.final and standings.winners == ()
    assert [(r.seat, r.score, r.place) for r in standings.seats] == [("Blue", 0, 1), ("Red", 0, 1)]
    assert rules.status().round == 0 and not rules.status().race_open


def test_spank_doubles_default_by_seat_count_is_the_option_the_table_shows() -> None:
    assert SpankThePig(FOUR).options["doubles"] == "buttons"
    assert SpankThePig((*FOUR, "Purple")).options["doubles"] == "off"
    assert SpankThePig((*FOUR, "Purple"), {"doubles": "judge"}).options["doubles"] == "judge"


def test_spank_early_ms_given_is_kept_whatever_the_tempo() -> None:
    assert SpankThePig(FOUR, {"tempo_ms": 700, "early_ms": 300}).options["early_ms"] == 300
    assert SpankThePig(FOUR, {"tempo_ms": 700}).options["early_ms"] == 1400
    assert SpankThePig(FOUR, {"tempo_ms": 700, "early_ms": 0}).options["early_ms"] == 0


def test_spank_cues_may_share_an_instant_but_not_go_back() -> None:
    rules = SpankThePig(FOUR)
    rules.feed(Cue(5 * S))
    rules.feed(Cue(5 * S))  # the same instant: accepted
    try:
        rules.feed(Cue(5 * S - 1))
    except RulesError as exc:
        assert str(exc) == f"cue at {5 * S - 1} comes before the previous cue"
    else:
        raise AssertionError("a cue going back in time was taken")


def flips_live(rules: PigsTail, n: int, turn_us: int = 4 * S) -> None:
    for k in range(1, n + 1):
        rules.advance(k * turn_us)
        rules.feed(Cue(k * turn_us, THREE[(k - 1) % 3]))


def test_pigs_tail_before_the_first_flip() -> None:
    rules = PigsTail(THREE)
    standings = rules.standings()
    assert [(r.seat, r.score, r.place) for r in standings.seats] == [
        ("Blue", 0, 1), ("Red", 0, 1), ("Green", 0, 1)]
    assert standings.final is False and standings.winners == ()
    assert rules.status().over is False and rules.status().round == 0
    assert rules.next_call() == Call("turn", "Blue")


def test_pigs_tail_the_flippers_claim_rules_at_once() -> None:
    """A claim by the flipper decides the flip there and then; another seat's press does not."""
    rules = PigsTail(THREE, {"window_ms": 3000})
    flips_live(rules, 2)
    rules.take_changed()
    rules.advance(8 * S + 200 * MS)
    rules.feed(Press(8 * S + 200 * MS, "Blue"))  # not the flipper: ignored
    assert rules.status().closes_at_us == 11 * S and rules.take_changed() == []
    rules.advance(8 * S + 300 * MS)
    rules.feed(Press(8 * S + 300 * MS, "Red"))
    assert rules.take_changed() == [2]
    assert rules.round_outputs(2)[0].seat == "Red" and rules.round_outputs(2)[0].delta == 2
    assert rules.reactions(2) == {"Red": 300 * MS}
    assert rules.status().race_open is False


def test_pigs_tail_the_next_flip_rules_the_one_before_at_once() -> None:
    """Window 10 s, flips 4 s apart: flip 2's race ends at flip 3, and is ruled then (two taps
    of three: the judge is asked), not 10 s after flip 2."""
    rules = PigsTail(THREE, {"take": "slowest", "window_ms": 10_000})
    flips_live(rules, 2)
    for ms, seat in ((100, "Red"), (200, "Blue")):
        rules.advance(8 * S + ms * MS)
        rules.feed(Press(8 * S + ms * MS, seat))
    rules.take_changed()
    assert rules.status().closes_at_us == 18 * S
    rules.advance(12 * S)
    rules.feed(Cue(12 * S, "Green"))
    assert rules.take_changed() == [2]
    assert rules.status().awaiting is not None and rules.status().awaiting.round == 2
    assert rules.status().closes_at_us == 22 * S


def test_pigs_tail_a_tap_at_the_very_instant_of_the_first_flip_is_a_false_start() -> None:
    rules = PigsTail(THREE, {"take": "slowest"})
    flips_live(rules, 1)
    assert rules.status().race_open
    rules.feed(Press(4 * S, "Red"))
    assert rules.reactions(1) == {"Red": 0}  # shown at once
    rules.advance(7 * S)
    assert [(r.seat, r.delta, r.reason.value) for r in rules.round_outputs(1)] == [
        ("Red", 1, "false start")]


def test_pigs_tail_a_penalty_adds_to_the_cards_already_taken() -> None:
    rules = PigsTail(THREE)
    flips_live(rules, 3)
    rules.feed(Press(12 * S + 100 * MS, "Green"))  # flip 3: Green takes 3
    rules.advance(12 * S + 200 * MS)
    rules.feed(Penalty(3, "Green", 2, "peeked"))
    assert {r.seat: r.score for r in rules.standings().seats}["Green"] == 5


def test_pigs_tail_the_52nd_flip_ends_the_calls_even_while_it_awaits_the_judge() -> None:
    rules = PigsTail(THREE, {"take": "slowest"})
    flips_live(rules, 52)
    rules.feed(Press(52 * 4 * S + 100 * MS, "Red"))  # one tap of three: ask the judge
    assert rules.status().over is False  # its window is still open
    rules.advance(52 * 4 * S + 3 * S)
    status = rules.status()
    assert status.awaiting is not None and status.awaiting.round == 52 and not status.over
    assert rules.next_call() is None  # the ring is empty
    # a 53rd cue, even one stamped before the 52nd, is ignored rather than refused
    rules.feed(Cue(52 * 4 * S - 1, "Red"))
    assert rules.round_count() == 52
    rules.feed(Facts(52, {"match": False}))
    assert rules.status().over and rules.standings().final


def test_pigs_tail_cues_may_share_an_instant_but_not_go_back_and_name_the_flipper() -> None:
    rules = PigsTail(THREE)
    rules.feed(Cue(4 * S, "Blue"))
    rules.feed(Cue(4 * S, "Red"))
    for cue, message in ((Cue(4 * S - 1, "Green"), f"cue at {4 * S - 1} comes before the previous cue"),
                         (Cue(5 * S), 'a Pig\'s Tail cue names the flipper: add "seat"')):
        try:
            rules.feed(cue)
        except RulesError as exc:
            assert str(exc) == message
        else:
            raise AssertionError(f"{cue} was taken")


def claims(rules: Pig, t_us: int, order: tuple[str, ...], gap_ms: int = 200) -> None:
    for i, seat in enumerate(order):
        t = t_us + i * gap_ms * MS
        rules.advance(t)
        rules.feed(Press(t, seat))


def test_pig_a_rejected_claim_is_ruled_at_once() -> None:
    rules = Pig(FOUR)
    claims(rules, 1 * S, ("Blue",))
    rules.take_changed()
    rules.feed(Facts(1, {"claim": False}))
    assert rules.take_changed() == [1]
    assert [(r.seat, r.delta, r.reason.value) for r in rules.round_outputs(1)] == [
        ("Blue", 1, "false claim")]


def test_pig_a_voided_claim_stops_waiting_for_its_race() -> None:
    rules = Pig(("Blue", "Red", "Green"))
    claims(rules, 1 * S, ("Blue", "Red"))  # all but one: decided 1 ms after Red
    assert rules.status().closes_at_us == 1 * S + 201 * MS
    rules.feed(Facts(1, {"void": True}))
    assert rules.status().closes_at_us == 16 * S  # only the claim's window is left
    rules.advance(2 * S)
    assert rules.round_outputs(1) == []


def test_pig_each_ruling_is_announced_once_in_its_round() -> None:
    rules = Pig(("Blue", "Red", "Green", "Yellow", "Purple"))
    claims(rules, 1 * S, ("Blue", "Red", "Green", "Yellow"))
    rules.advance(2 * S)
    assert rules.take_changed() == [1]
    claims(rules, 20 * S, ("Blue", "Red", "Green"))
    rules.advance(21 * S)
    assert rules.take_changed() == [2]
    assert rules.take_changed() == []
    assert rules.opened_by(1) == (1 * S, "Blue") and rules.opened_by(2) == (20 * S, "Blue")
    assert rules.reactions(1)["Yellow"] == 600 * MS and rules.reactions(2) == {
        "Blue": 0, "Red": 200 * MS, "Green": 400 * MS}
    assert rules.racing(2) == ("Blue", "Red", "Green", "Yellow")


def test_pig_a_press_arriving_late_for_an_earlier_round_re_rules_that_round() -> None:
    """The button path may deliver a press after a later one: Yellow's press of round 1 arrives
    once round 2 has been claimed; round 1 is re-ruled (Purple, not Yellow, was the last)."""
    rules = Pig(("Blue", "Red", "Green", "Yellow", "Purple"), {"stragglers": "no-one"})
    claims(rules, 1 * S, ("Blue", "Red", "Green"))
    claims(rules, 20 * S, ("Red",))
    rules.advance(20 * S + 100 * MS)
    assert rules.round_outputs(1)[0].seat is None  # two never pressed: unclear
    rules.feed(Press(1 * S + 700 * MS, "Yellow"))
    assert [(r.seat, r.delta) for r in rules.round_outputs(1)] == [("Purple", 1)]


def test_pig_co_winners_share_first_place_whatever_letters_they_lost() -> None:
    rules = Pig(("Blue", "Red", "Green"), {"lives": 3})
    claims(rules, 1 * S, ("Blue", "Red"))  # Green loses a life: P
    rules.feed(Penalty(1, "Blue", 3, "peeked"))  # Blue out: the game is over
    rules.advance(2 * S)
    standings = rules.standings()
    assert standings.final and set(standings.winners) == {"Red", "Green"}
    assert {r.seat: (r.score, r.place, r.out) for r in standings.seats} == {
        "Red": (0, 1, False), "Green": (1, 1, False), "Blue": (3, 3, True)}


def test_pig_a_round_that_takes_out_everyone_left_makes_them_all_co_winners() -> None:
    rules = Pig(("Blue", "Red", "Green"), {"stragglers": "all-lose"})
    claims(rules, 1 * S, ("Blue",))  # Red and Green never press: both lose
    rules.feed(Penalty(1, "Blue", 1, "peeked"))
    rules.advance(20 * S)
    standings = rules.standings()
    assert standings.final and standings.winners == ("Blue", "Red", "Green")


def test_pig_a_press_arriving_late_from_before_the_first_claim_is_the_claim() -> None:
    rules = Pig(FOUR)
    claims(rules, 1 * S, ("Blue", "Red"))
    assert rules.opened_by(1) == (1 * S, "Blue") and rules.status().race_open
    rules.feed(Press(1 * S - 300 * MS, "Green"))  # delivered late, pressed first
    assert rules.reactions(1) == {"Green": 0, "Blue": 300 * MS, "Red": 500 * MS}
    assert rules.opened_by(1) == (1 * S - 300 * MS, "Green")
    rules.advance(2 * S)
    assert [(r.seat, r.delta) for r in rules.round_outputs(1)] == [("Yellow", 1)]


def test_pig_a_claim_stands_until_the_judge_says() -> None:
    rules = Pig(FOUR)
    claims(rules, 1 * S, ("Blue", "Red", "Green"))
    rules.advance(2 * S)
    assert rules.refutable(1) is not None and rules.refutable(1).name == "claim"
    rules.feed(Facts(1, {"claim": True}))
    assert rules.refutable(1) is None


def test_pig_words_for_the_scoreboard() -> None:
    """With 3 lives letters (P-I-G); with 1 lives lost; the title names the variant."""
    shared = {"pressed": "pressed", "thing": "spoon", "act": "grab a spoon", "more_wins": False,
              "zero_said": True, "title": "Spoons", "penalties": ["judge's penalty"],
              "next": "Next round now", "judge_starts": False}
    rules = Pig(FOUR, {"variant": "spoons", "lives": 3})
    assert rules.words({"Blue": 0, "Red": 2}) == {
        **shared, "unit": ["letter", "letters"], "letters": {"Blue": "", "Red": "P-I"}}
    rules = Pig(FOUR, {"variant": "spoons", "lives": 1})
    assert rules.words({"Blue": 0, "Red": 1}) == {**shared, "unit": ["life lost", "lives lost"]}


def test_pig_nothing_to_announce_for_a_round_not_yet_reached() -> None:
    rules = Pig(FOUR)
    claims(rules, 1 * S, ("Blue", "Red", "Green"))
    rules.advance(2 * S)
    assert rules.announcements(3) == [] and rules.announcements(4) == []


def test_pigs_tail_a_seat_taking_the_pile_twice_keeps_both() -> None:
    rules = PigsTail(THREE)
    flips_live(rules, 6)
    for k in (3, 6):  # Green flips cards 3 and 6 and claims both: 3 cards each time
        rules.feed(Press(k * 4 * S + 100 * MS, "Green"))
    rules.advance(30 * S)
    assert {r.seat: r.score for r in rules.standings().seats} == {"Blue": 0, "Red": 0, "Green": 6}
