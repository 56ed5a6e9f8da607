"""What the investigations of the claims that do not hold concluded, per paper and figure (the page shows each
under its figure's claims; docs/paper-comparisons.md has the numbers)."""

CONCLUSIONS = {
    ("po-gp-ucb", "Fig. 2a"): (
        "Not a bug: on the square grid both singular values are equal, so the lift rescales X by "
        "√(1 + ω²/σ_min²) = 1, 1.53, 1.99, 3.02 at e^1.1, e^0.9, e^0.5, e^0 and the modeler applies the curator's "
        "length-scale to inputs that much larger. Regret is not monotone in that mismatch; with the modeler "
        "refitting its hyperparameters every ε gives about 0.01 and the ordering disappears. The authors' code is "
        "not public."),
    **{("po-gp-ucb", f"Table {i}"): (
        "Every admissible r from 6 up is within a standard error of the largest (as in the paper's own Table 2); "
        "the lifting branch costs 0.065-0.07 and holds." if i <= 3 else
        "Stand-in: non-private GP-UCB already leaves 0.27 (loan-like) or 0.37 (property-like) and the standard "
        "errors (0.01-0.03) match the paper's differences between r values.") for i in range(1, 10)},
    ("po-gp-ucb", "Fig. 2b"): "Stand-in: GP-UCB itself leaves 0.27 on loan-like; the private settings' extra "
                               "regret is within two standard errors.",
    ("po-gp-ucb", "Fig. 2c"): "Stand-in: the three ε differ by less than two standard errors (0.015-0.03).",
    ("po-gp-ucb", "App. A"): (
        "Not significant, not reversed: e^0.9 leaves 0.015 and e^0 0.019 (+0.004 ± 0.003 over 50 paired runs); both "
        "lift the inputs and both regrets stay below 0.02 on this smooth 2-D function, so 50 runs cannot separate "
        "them. e^1.1 (no lift) against e^0.9 holds."),
    ("dp-hype", "Fig. 5"): (
        "Digits: at n = 250 a client trains on about 4 examples and a bad candidate collects the most clean votes; "
        "the stand-ins, with the paper's client sizes, hold. Cifar-like RANDGUESS (0.23, paper about 0.40): our "
        "short training leaves 70 candidates at chance (RANDGUESS 0.22)."),
    ("dp-hype", "Fig. 6"): (
        "Our convex models averaged after one local epoch barely drift under label skew, so OPT does not fall with "
        "α (the paper's CNNs train 5-10 local epochs): a difference in model and training, not a bug."),
    ("dp-hype", "Fig. 9"): "As Fig. 6: no client drift with our models; digits is too small at n = 250.",
    ("dp-hype", "Fig. 10"): "Digits only (4 training examples per client at n = 250); the stand-ins hold.",
    ("dp-hype", "Fig. 11"): "Digits: OPT differs by 0.01 between n = 50 and 250, within its standard error.",
}


def conclusion(paper: str, figure: str) -> str | None:
    return CONCLUSIONS.get((paper, figure))
