"""A graded control against its declaration: the points each exercise must earn, the hint the scorecard must show
and the mistake results.json must carry (grader/dev/controls.py declares them; tests and `grader controls` ask)."""


def per_exercise(results):
    """{exercise: (earned, possible)} from a results.json dict."""
    totals = {}
    for t in results["tests"]:
        earned, possible = totals.get(t["tags"][0], (0.0, 0.0))
        totals[t["tags"][0]] = (earned + t["score"], possible + t["max_score"])
    return totals


def _first_failure(results):
    """What the first test that lost points said (the words a missing hint's place held), for the verdict."""
    failed = next((t for t in results["tests"] if t["score"] < t["max_score"]), None)
    if failed is None:
        return "no test lost points"
    said = failed["output"].strip()
    return f"{failed['name']} said: {said[:400]}{' ...' if len(said) > 400 else ''}"


def verdict(control, results):
    """A list of the ways the graded control differs from what it must get (empty: as expected)."""
    totals, problems = per_exercise(results), []
    for ex, (earned, possible) in totals.items():
        want = control.scores.get(ex, possible)
        if earned != want:
            problems.append(f"{ex}: got {earned:g}, must get {want:g} of {possible:g}")
    for ex in control.scores:
        if ex not in totals:
            problems.append(f"{ex}: no graded test ran")
    outputs = "\n".join(t["output"] for t in results["tests"])
    if control.hint and control.hint not in outputs:
        problems.append(f"the hint {control.hint!r} was not shown; {_first_failure(results)}")
    carried = {m for t in results["tests"] for m in (t.get("extra_data") or {}).get("mistakes") or ()}
    if control.mistake and control.mistake not in carried:
        problems.append(f"results.json does not name the mistake {control.mistake!r} (named: {sorted(carried)})")
    false = carried - {control.mistake, *control.also}
    if control.mistake and false:  # a hint about a mistake this submission did not make
        problems.append(f"results.json also names {sorted(false)}, mistakes this submission does not make (its own: "
                        f"{control.mistake!r}{''.join(f', {m!r}' for m in control.also)})")
    return problems
