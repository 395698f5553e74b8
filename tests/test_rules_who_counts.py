"""Scenarios that can see their rule (issue 17, point 3).

Several named rule tests were arranged so that the rule they name could be broken without the
outcome changing (a repeated press after the window had settled; the benched seat pressing first
in sudden death; the real claim inside an eliminated seat's window...). Each test here is the
sibling of such a test: the same rule, arranged so that breaking it changes who loses, the
reason, the margin or the standings. The docstring names the sibling and what breaking the rule
would give.
"""

from __future__ import annotations

from typing import Any

from referee.events import Cue, Press
from referee.rules.spank import SpankThePig
from tests.rules_log import FIVE, FOUR, MS, THREE, S, cue, facts, game, press, rulings, run


def standings(out: list[dict[str, Any]]) -> tuple[bool, list[str], dict[str, tuple[int, bool]]]:
    last = out[-1]
    return last["final"], last["winners"], {r["seat"]: (r["score"], r["out"]) for r in last["seats"]}


# -- one press per button per round: the first counts, not the latest -----------------------------


def test_spank_a_repeated_slap_inside_the_open_window_does_not_make_that_seat_last() -> None:
    """Sibling of test_only_a_seats_first_press_counts (whose repeat came after the window had
    settled). With the double buttons nobody pressed, the window is still open when Red slaps
    again after everyone: counting Red's latest slap would make Red the last slapper."""
    out = run(game("spank-the-pig", FOUR, doubles="buttons"), cue(1 * S),
              press(1 * S + 100 * MS, "Red"), press(1 * S + 200 * MS, "Blue"),
              press(1 * S + 300 * MS, "Green"), press(1 * S + 400 * MS, "Yellow"),
              press(1 * S + 500 * MS, "Red"))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig", 100 * MS)]


def test_spank_a_repeated_double_inside_the_window_does_not_make_that_seat_last() -> None:
    out = run(game("spank-the-pig", FOUR, doubles="buttons"), cue(1 * S),
              *(press(1 * S + (100 + 100 * i) * MS, s, "double") for i, s in enumerate(FOUR)),
              press(1 * S + 600 * MS, "Blue", "double"), facts(1, pigs=0, doubles=["cow"]))
    assert rulings(out) == [(1, "Yellow", 1, "last to declare the double", 100 * MS)]


def test_spank_a_repeated_wrong_slap_is_not_the_runner_up() -> None:
    """No pig: Red slaps twice, Blue once. The margin of "first to slap with no pig" is to
    Blue's slap; Red's own second slap, if it counted, would make it 1 ms (too close at 2 ms)."""
    out = run(game("spank-the-pig", FOUR, doubles="off", tie_us=2000), cue(1 * S),
              press(1 * S + 100 * MS, "Red"), press(1 * S + 101 * MS, "Red"),
              press(1 * S + 400 * MS, "Blue"), facts(1, pigs=0))
    assert rulings(out) == [(1, "Red", 1, "first to slap with no pig", 300 * MS)]


def test_pig_a_repeated_press_after_the_others_does_not_take_that_seat_out_of_the_race() -> None:
    """Pig: Red presses at 1.2 s and again at 1.45 s, after the race was decided at 1.401 s.
    Counting Red's latest press would leave Red and Yellow both missing: "unclear"."""
    out = run(game("pig", FOUR), press(1 * S, "Blue"), press(1 * S + 200 * MS, "Red"),
              press(1 * S + 400 * MS, "Green"), press(1 * S + 450 * MS, "Red"))
    assert rulings(out) == [(1, "Yellow", 1, "last to touch the nose", None)]


def test_pig_a_repeated_press_does_not_move_the_moment_the_race_is_decided() -> None:
    """Red presses again just before the race is decided (1.401 s). Yellow, at 1.4015 s, is
    after that moment and loses; were Red's latest press its time, the race would be decided
    1 ms after it (1.4019 s), Yellow would be in, and it would be a photo finish."""
    out = run(game("pig", FOUR), press(1 * S, "Blue"), press(1 * S + 200 * MS, "Red"),
              press(1 * S + 400 * MS, "Green"), press(1 * S + 400 * MS + 900, "Red"),
              press(1 * S + 400 * MS + 1500, "Yellow"))
    assert rulings(out) == [(1, "Yellow", 1, "last to touch the nose", None)]


def test_pigs_tail_a_repeated_tap_does_not_change_the_margin_to_the_last() -> None:
    out = run(game("pigs-tail", THREE, take="slowest"), cue(4 * S, "Blue"), cue(8 * S, "Red"),
              press(8 * S + 100 * MS, "Blue"), press(8 * S + 300 * MS, "Red"),
              press(8 * S + 400 * MS, "Blue"), press(8 * S + 500 * MS, "Green"))
    assert rulings(out) == [(2, "Green", 2, "last to tap", 200 * MS)]


def test_pigs_tail_a_repeated_false_start_is_not_the_runner_up() -> None:
    out = run(game("pigs-tail", THREE, take="slowest", tie_us=2000), cue(4 * S, "Blue"),
              cue(8 * S, "Red"), press(8 * S + 100 * MS, "Green"), press(8 * S + 101 * MS, "Green"),
              press(8 * S + 300 * MS, "Blue"), facts(2, match=False))
    assert rulings(out) == [(2, "Green", 2, "false start", 200 * MS)]


def test_pigs_tail_a_repeated_tap_between_flips_is_not_the_runner_up() -> None:
    out = run(game("pigs-tail", THREE, take="slowest", tie_us=2000), cue(4 * S, "Blue"),
              cue(8 * S, "Red"), press(11 * S + 100 * MS, "Green"),
              press(11 * S + 101 * MS, "Green"), press(11 * S + 300 * MS, "Blue"), cue(12 * S, "Green"))
    assert rulings(out) == [(2, "Green", 2, "false start between flips", 200 * MS)]


# -- sudden death: only the tied leaders play ------------------------------------------------------


def test_sudden_death_the_benched_seat_slapping_last_is_not_last() -> None:
    """Sibling of test_sudden_death_only_tied_leaders_play_and_a_whammy_knocks_out (whose benched
    seat slapped first, so it could never be last). Green, benched, slaps after both leaders:
    if Green still raced, Green would be last and Blue would not be out."""
    out = run(game("spank-the-pig", THREE, deck=3, doubles="off"),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 200 * MS, "Red"),
              press(1 * S + 300 * MS, "Green"),  # Green +1: Blue and Red tie at 0
              cue(5 * S), press(5 * S + 100 * MS, "Red"), press(5 * S + 200 * MS, "Blue"),
              press(5 * S + 300 * MS, "Green"))
    assert rulings(out, 2) == [(2, "Blue", 1, "last to spank the pig", 100 * MS)]
    assert standings(out) == (True, ["Red"], {"Red": (0, False), "Blue": (1, True),
                                              "Green": (1, False)})


def test_sudden_death_the_benched_seat_never_slapping_is_not_last() -> None:
    """A benched seat that does not slap at all is not "the seat that never slapped"."""
    out = run(game("spank-the-pig", THREE, deck=3, doubles="off"),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 200 * MS, "Red"),
              press(1 * S + 300 * MS, "Green"),
              cue(5 * S), press(5 * S + 100 * MS, "Red"), press(5 * S + 200 * MS, "Blue"))
    assert rulings(out, 2) == [(2, "Blue", 1, "last to spank the pig", 100 * MS)]
    assert standings(out)[:2] == (True, ["Red"])


def test_sudden_death_a_knocked_out_seat_plays_no_more() -> None:
    """Three tied leaders; Yellow is knocked out in round 2, then slaps last in round 3: only
    Blue, Red and... no: only the two left race, and the last of them is out."""
    out = run(game("spank-the-pig", FOUR, deck=4, doubles="off"),
              cue(1 * S), *(press(1 * S + (100 + 100 * i) * MS, s) for i, s in
                            enumerate(["Blue", "Red", "Yellow", "Green"])),  # Green +1
              cue(5 * S), *(press(5 * S + (100 + 100 * i) * MS, s) for i, s in
                            enumerate(["Blue", "Red", "Yellow"])),  # Yellow out
              cue(9 * S), press(9 * S + 100 * MS, "Red"), press(9 * S + 200 * MS, "Blue"),
              press(9 * S + 300 * MS, "Yellow"))  # Blue is last of the two left
    assert rulings(out, 3) == [(3, "Blue", 1, "last to spank the pig", 100 * MS)]
    assert standings(out)[:2] == (True, ["Red"])


# -- Pig: an eliminated seat neither claims nor races ---------------------------------------------


def test_pig_an_eliminated_seats_press_long_before_the_next_claim_opens_no_round() -> None:
    """Sibling of test_eliminated_seat_cannot_claim_and_is_not_in_the_race (whose real claim
    came inside the 15 s the eliminated seat's press would have held open). Purple, out, presses
    25 s before the next claim: if that were a claim, round 2 would be Purple's, unclear."""
    out = run(game("pig", FIVE),
              *(press(1 * S + i * 200 * MS, s) for i, s in enumerate(FOUR)),  # Purple out
              press(20 * S, "Purple"),
              *(press(45 * S + i * 200 * MS, s) for i, s in enumerate(["Red", "Green", "Blue"])))
    assert rulings(out) == [(1, "Purple", 1, "last to touch the nose", None),
                            (2, "Yellow", 1, "last to touch the nose", None)]


def test_pig_an_eliminated_seat_is_not_a_straggler() -> None:
    """Purple is out; in round 2 only Yellow never presses: Yellow loses. If Purple still raced,
    two seats would be missing and the round unclear."""
    out = run(game("pig", FIVE),
              *(press(1 * S + i * 200 * MS, s) for i, s in enumerate(FOUR)),
              *(press(20 * S + i * 200 * MS, s) for i, s in enumerate(["Red", "Green", "Blue"])))
    assert rulings(out, 2) == [(2, "Yellow", 1, "last to touch the nose", None)]


def test_pig_an_eliminated_seats_press_inside_a_round_is_not_its_claim_nor_its_race() -> None:
    """Purple is out and presses first in round 2's window: Red's claim still opens round 2
    (Red is the claimer a false claim costs)."""
    out = run(game("pig", FIVE), *(press(1 * S + i * 200 * MS, s) for i, s in enumerate(FOUR)),
              press(20 * S, "Purple"), press(20 * S + 100 * MS, "Red"), facts(2, claim=False))
    assert rulings(out, 2) == [(2, "Red", 1, "false claim", None)]


# -- Pig's Tail: the ring holds 52 cards -------------------------------------------------------------


def test_pigs_tail_a_tap_after_the_52nd_flips_window_takes_nothing() -> None:
    """Sibling of test_game_over_after_the_52nd_card_with_shared_places (whose tap after the end
    was in flipper mode, where gap taps never count). In `slowest`, a tap after the 52nd flip's
    window is not a false start between flips: there is no next flip. Counted, Red would take
    the 52-card pile."""
    flips = [cue(k * 4 * S, THREE[(k - 1) % 3]) for k in range(1, 53)]
    out = run(game("pigs-tail", THREE, take="slowest"), *flips, press(52 * 4 * S + 3500 * MS, "Red"))
    assert rulings(out) == []
    assert standings(out) == (True, THREE, {s: (0, False) for s in THREE})


def test_pigs_tail_a_tap_between_the_51st_and_52nd_flips_is_a_false_start() -> None:
    """... while between the 51st and 52nd flips it is one (the rule's other side)."""
    flips = [cue(k * 4 * S, THREE[(k - 1) % 3]) for k in range(1, 53)]
    out = run(game("pigs-tail", THREE, take="slowest"), *flips, press(51 * 4 * S + 3500 * MS, "Red"))
    assert rulings(out) == [(51, "Red", 51, "false start between flips", None)]


def test_pigs_tail_cues_after_the_52nd_are_no_flips() -> None:
    """A 53rd cue is ignored: a flipper's claim on it takes nothing, and the game is over."""
    flips = [cue(k * 4 * S, THREE[(k - 1) % 3]) for k in range(1, 54)]
    out = run(game("pigs-tail", THREE), *flips, press(53 * 4 * S + 100 * MS, flips[-1]["seat"]))
    assert rulings(out) == []
    assert standings(out)[0] is True


# -- Spank the Pig!: early slaps ---------------------------------------------------------------------


def test_an_early_slap_does_not_count_as_slapping_the_pig() -> None:
    """Red slaps early and never again: Red is also the one who never slapped the pig. If the
    early slap counted in the race, Yellow (slowest after the cue) would be last instead."""
    c = 2 * S
    out = run(game("spank-the-pig", FOUR, doubles="off"), press(c - 200 * MS, "Red"), cue(c),
              press(c + 100 * MS, "Blue"), press(c + 200 * MS, "Green"),
              press(c + 300 * MS, "Yellow"), facts(1, pigs=1))
    assert rulings(out) == [(1, "Red", 1, "slap too early", None),
                            (1, "Red", 1, "last to spank the pig", None)]


def test_an_early_slap_is_ruled_whatever_the_judge_says_about_the_pigs() -> None:
    c = 2 * S
    for pigs in (0, 1, 3):
        out = run(game("spank-the-pig", FOUR, doubles="off"), press(c - 200 * MS, "Red"),
                  press(c - 100 * MS, "Blue"), cue(c), facts(1, pigs=pigs))
        assert rulings(out)[0] == (1, "Red", 1, "slap too early", 100 * MS)


def test_a_shed_needs_a_whammy_taken_earlier_in_the_same_round() -> None:
    """Three pigs: Blue slaps early (1 whammy), then is among the first three: it sheds the
    whammy it just took. Blue ends on 0, not 1."""
    c = 2 * S
    out = run(game("spank-the-pig", FIVE, doubles="off"), press(c - 200 * MS, "Blue"), cue(c),
              *(press(c + (100 + 100 * i) * MS, s) for i, s in enumerate(FIVE)), facts(1, pigs=3))
    assert (1, "Blue", -1, "first to spank a pig", 300 * MS) in rulings(out)
    assert standings(out)[2]["Blue"] == (0, False)


def test_no_score_below_zero_a_shed_on_an_empty_pile() -> None:
    c = 2 * S
    out = run(game("spank-the-pig", FIVE, doubles="off"), cue(c),
              *(press(c + (100 + 100 * i) * MS, s) for i, s in enumerate(FIVE)), facts(1, pigs=3))
    assert rulings(out)[0] == (1, "Blue", 0, "first to spank a pig, no whammy to shed", 300 * MS)
    assert all(score >= 0 for score, _ in standings(out)[2].values())


def test_spank_reaction_times_while_the_race_is_open_keep_each_seats_first_slap() -> None:
    """The scoreboard shows each seat's reaction time while the race is still open: Red's is
    its first slap (100 ms), not its second (300 ms)."""
    rules = SpankThePig(FOUR, {"doubles": "off"})
    rules.feed(Cue(1 * S))
    for t, seat in [(1 * S + 100 * MS, "Red"), (1 * S + 200 * MS, "Blue"), (1 * S + 300 * MS, "Red")]:
        rules.advance(t)
        rules.feed(Press(t, seat))
    assert rules.status().race_open
    assert rules.reactions(1) == {"Red": 100 * MS, "Blue": 200 * MS}


def test_a_stray_cue_after_the_game_is_over_does_not_cut_the_last_round_short() -> None:
    """Sibling of test_cues_after_the_game_is_over_are_ignored (whose stray cue came after the
    last round's window anyway). Here it comes 500 ms after the last slap: were it a real cue,
    its early window would start before the last round's slaps and take them out of the race."""
    out = run(game("spank-the-pig", ["Blue", "Red"], deck=2, doubles="off"), cue(1 * S),
              press(1 * S + 100 * MS, "Blue"), press(1 * S + 200 * MS, "Red"),
              cue(1 * S + 700 * MS), press(1 * S + 800 * MS, "Red"))
    assert rulings(out) == [(1, "Red", 1, "last to spank the pig", 100 * MS)]
    assert standings(out) == (True, ["Blue"], {"Blue": (0, False), "Red": (1, False)})


def test_a_correction_long_after_its_round_still_has_every_press_that_counts() -> None:
    """The rules forget presses that can never count again, to keep memory flat over a long
    game; a correction to round 1, given four rounds later, must still find round 1's early
    slap (at the first µs of its early window), the slaps at the very cue (one of them after the
    seat's own early slap), and a seat's race slap after its own early one. Forgetting any of
    them changes who takes the two whammies."""
    c = 2 * S
    lines = [game("spank-the-pig", FOUR, doubles="off"),
             press(c - 1000 * MS, "Green"), press(c - 500 * MS, "Blue"), cue(c), press(c, "Red"),
             press(c, "Blue"), press(c + 200 * MS, "Yellow"), press(c + 300 * MS, "Green"),
             press(c + 350 * MS, "Red")]
    for k in range(1, 5):  # four more rounds, everyone slapping
        lines += [cue(c + k * 4 * S), *(press(c + k * 4 * S + (100 + 50 * i) * MS, s)
                                        for i, s in enumerate(FOUR))]
    out = run(*lines, facts(1, pigs=2))
    assert rulings(out, 1) == [(1, "Green", 1, "slap too early", 500 * MS),
                               (1, "Green", 2, "last to spank the pigs", 100 * MS)]
    out = run(*lines, facts(1, pigs=0))
    assert rulings(out, 1) == [(1, "Green", 1, "slap too early", 500 * MS)]
    # and round 2, corrected after three more rounds: its first slapper, by 50 ms
    out = run(*lines, facts(2, pigs=0))
    assert rulings(out, 2) == [(2, "Blue", 1, "first to slap with no pig", 50 * MS)]


def test_a_quick_next_cue_takes_the_slaps_after_its_early_window_starts_out_of_the_round() -> None:
    """Round 1 settled (everyone slapped by 1.4 s) and was ruled; the next cue comes at 2.2 s,
    so its early window (1 s) starts at 1.2 s, which closes round 1's race there: Red, Green and
    Yellow slapped in round 2's early window instead. Round 1 is re-ruled (only Blue slapped in
    it: the judge is asked), and Red is round 2's early slapper. Without the re-ruling round 1
    would keep Yellow as its last slapper."""
    out = run(game("spank-the-pig", FOUR, doubles="off"), cue(1 * S),
              *(press(1 * S + (100 + 100 * i) * MS, s) for i, s in enumerate(FOUR)),
              cue(2200 * MS))
    assert rulings(out) == [(2, "Red", 1, "slap too early", 100 * MS)]
    assert {"type": "awaiting", "round": 1, "need": ["pigs"]} in out
