"""The real `referee play`, with hands on the buttons: run by tests/test_power_loss.py, and killed.

`python -m tests.drivers.play_driver play spank-the-pig --mock ...` (with the repository on
PYTHONPATH) runs `referee.cli.main.main` with `Table` swapped for a subclass that, once the game is
started or resumed, presses the mocked buttons from a thread and answers the judge. It reports what
it does on stderr as "@@ WHAT ..." lines, one os.write each (atomic even when the process is
SIGKILLed mid-game):

    @@ STARTED {"game_id": 1, "round": 0, "phase": "setup"}
    @@ CADENCE n | RACE n plan | PRESS n seat | AWAITING n | JUDGED n yes|no | RULED n [...] | OVER {...}

Environment: DRIVE_PLANS (who slaps in round n, cycling: "all", "split" = the first seat only,
"none"), DRIVE_GAP_S (about this long between two presses), DRIVE_JUDGE_WAIT_S (the judge's
thinking time before answering a question).
"""

from __future__ import annotations

import json
import os
import queue
import random
import sys
import threading
import time
from typing import Any

import referee.cli.table as bootstrap
from referee.cli import main as cli
from referee.engine.loop import Engine
from referee.events import JudgeKey

PLANS = os.environ.get("DRIVE_PLANS", "all,split,all,none,all").split(",")
GAP_S = float(os.environ.get("DRIVE_GAP_S", "0.06"))
JUDGE_WAIT_S = float(os.environ.get("DRIVE_JUDGE_WAIT_S", "0.25"))


def mark(*parts: object) -> None:
    os.write(2, ("@@ " + " ".join(str(p) for p in parts) + "\n").encode())


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def drive(table: bootstrap.Table, engine: Engine, inbox: queue.SimpleQueue[Any],
          snap: dict[str, Any]) -> None:
    seats = list(engine.rules.seats)
    rng = random.Random(snap["round"] * 7919 + len(seats))
    pressed: set[int] = set()
    asked: set[int] = set()

    def judge(number: int) -> None:
        if number in asked:
            return
        asked.add(number)
        mark("AWAITING", number)
        time.sleep(JUDGE_WAIT_S)
        key = rng.choice(["yes", "no"])
        table.submit(JudgeKey(0, key))
        mark("JUDGED", number, key)

    if snap["phase"] == "ready":  # the Ready step (issue 13): the judge starts play
        table.submit(JudgeKey(0, "yes"))
    if snap["awaiting"]:
        judge(snap["awaiting"]["round"])
    while True:
        kind, data = inbox.get()
        if kind == "state" and data["phase"] == "cadence":
            mark("CADENCE", data["round"])
        elif kind == "state" and data["phase"] == "race" and data["round"] not in pressed:
            number = data["round"]
            pressed.add(number)
            plan = PLANS[(number - 1) % len(PLANS)]
            who = {"all": seats, "split": seats[:1], "none": []}[plan]
            mark("RACE", number, plan)
            for seat in rng.sample(who, len(who)):
                try:
                    table.box.press(seat)
                except ValueError:
                    # the table has closed its box under the hands (the game ended: in sudden
                    # death a benched seat's press comes after the last player's slap ended it)
                    if engine._stop.is_set():
                        return
                    raise
                mark("PRESS", number, seat)
                time.sleep(GAP_S * rng.uniform(0.6, 1.4))
        elif kind == "ruling":
            if any(r["type"] == "awaiting" for r in data["rulings"]):
                judge(data["round"])
            else:
                mark("RULED", data["round"], compact(data["rulings"]))
        elif kind == "over":
            mark("OVER", compact(data))


class DrivenTable(bootstrap.Table):
    def start(self, *args: Any, **kwargs: Any) -> Engine:
        engine = super().start(*args, **kwargs)
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        engine.subscribe(lambda kind, data: inbox.put((kind, data)))
        snap = engine.command("snapshot")
        mark("STARTED", compact({"game_id": engine.game_id, "round": snap["round"],
                                 "phase": snap["phase"]}))
        threading.Thread(target=drive, args=(self, engine, inbox, snap), daemon=True).start()
        return engine


def main(argv: list[str]) -> int:
    bootstrap.Table = DrivenTable  # type: ignore[misc]  # main() builds the table it finds here
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
