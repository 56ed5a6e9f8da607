"""What the investigations of the claims that do not hold concluded, per paper and figure (the page shows each
under its figure's claims; docs/paper-comparisons.md has the numbers).

Every conclusion is a template (engine.reproduce.sentences): its prose explains a mechanism and names no
verdict; the verdicts and numbers it rests on are fields filled from the stored JSON, so a conclusion cannot
cite a verdict the JSON does not hold (tests/test_sentences.py renders each). Power is the whole rule's
(engine.reproduce.power), never one test's.
"""

from __future__ import annotations

from engine.reproduce.sentences import render

P = "po-gp-ucb"
H = "dp-hype"


def _table(i: int) -> str:
    start = f"Table {i}"
    if i <= 3:
        return (f"Decreasing r: {{v:{P}|{start}: decreasing r}} ({{n:{P}|{start}: decreasing r}}); the largest "
                f"admissible r best: {{v:{P}|{start}: the largest admissible r =}}; the lifting branch: "
                f"{{v:{P}|{start}: r beyond}} ({{n:{P}|{start}: r beyond}}). The paper's own differences between "
                "admissible r are 0.001-0.01, of the order of what these runs can tell apart (the claims' "
                "'detectable' column gives the difference the whole rule would confirm with 80 % chance).")
    start += " (loan stand-in)" if i <= 6 else " (property stand-in)"
    return (f"Stand-in: non-private GP-UCB already leaves 0.27 (loan-like) or 0.37 (property-like) here. Decreasing "
            f"r: {{v:{P}|{start}: decreasing r}} and the lifting branch: {{v:{P}|{start}: r beyond}}. The paper's "
            "differences "
            "between r values are 0.01-0.03, below what 50 runs on these stand-ins can tell apart; the largest "
            "admissible r is by construction of the stand-in.")


CONCLUSIONS = {
    (P, "Fig. 2a"): (
        f"The orderings depend on the synthetic grid's extent, which the paper does not state. On our [0, 7.5]^2: "
        f"e^0.9 against e^0.5 {{v:{P}|Fig. 2a: smaller epsilon, more regret: e^0.9}}, e^0.5 against e^0 "
        f"{{v:{P}|Fig. 2a: smaller epsilon, more regret: e^0.5}} ({{n:{P}|Fig. 2a: smaller epsilon, more regret: "
        "e^0.5}). Ablation on [0, 3.75]^2 and [0, 15]^2: {ac:pogpucb-extent|Fig. 2a: smaller epsilon, more regret: "
        "e^0.5} On the square grid both singular values are equal, so the lift rescales X by "
        "sqrt(1 + omega^2 / sigma_min^2) = 1, 1.53, 1.99, 3.02 and the modeler applies the curator's length-scale to "
        "inputs that much larger; how much that costs depends on how rough f is over the grid. The authors' code "
        "is not public."),
    **{(P, f"Table {i}"): None for i in range(1, 10)},
    (P, "Fig. 2b"): (f"Stand-in: GP-UCB itself leaves 0.27 on loan-like. e^2.9 against e^2: "
                     f"{{v:{P}|Fig. 2b (loan stand-in): smaller epsilon, more regret: e^2.9}}; e^2 against e^1: "
                     f"{{v:{P}|Fig. 2b (loan stand-in): smaller epsilon, more regret: e^2 }} "
                     f"({{n:{P}|Fig. 2b (loan stand-in): smaller epsilon, more regret: e^2 }}). The paper's extra "
                     "regrets (0.003-0.05) are below what 50 runs on this stand-in can tell apart."),
    (P, "Fig. 2c"): (f"Stand-in: e^2.8 against e^1 {{v:{P}|Fig. 2c (property stand-in): smaller epsilon, more regret: "
                     f"e^2.8}}; e^2.8's 'less than 0.05': {{v:{P}|Fig. 2c (property stand-in): epsilon = e^2.8}} "
                     f"({{n:{P}|Fig. 2c (property stand-in): epsilon = e^2.8}}); e^1's 'less than 0.1': "
                     f"{{v:{P}|Fig. 2c (property stand-in): epsilon = e^1 adds}}."),
    (P, "App. A"): (f"e^0.9 against e^0: {{v:{P}|App. A: smaller epsilon, more regret: e^0.9}} "
                    f"({{n:{P}|App. A: smaller epsilon, more regret: e^0.9}}): both lift the inputs and both regrets "
                    f"stay below 0.02 on this smooth 2-D function. e^1.1 (no lift) against e^0.9: "
                    f"{{v:{P}|App. A: smaller epsilon, more regret: e^1.1}}."),
    (H, "Fig. 4"): (
        f"Adult-like: logistic regression reaches the same optimum from most candidates with a learning rate of 0.05 "
        f"or more within the paper's 25 epochs ('fewer than a fifth within 0.02 of OPT': "
        f"{{v:{H}|adult-like: only a few candidates}}); cifar-like sits at the edge "
        f"({{v:{H}|cifar-like: only a few candidates}}). The stand-ins' model, not the method."),
    (H, "Fig. 5"): (
        f"Digits (other real data): 10 training and 4 validation examples per client at n = 100 cannot rank the "
        f"candidates (near-optimal at epsilon = 1: {{v:{H}|digits: DP-HYPE is near-optimal}}). Cifar-like "
        f"RANDGUESS near 40 %: {{v:{H}|cifar-like: RANDGUESS hovers}} (learning rates of 1e-5 and below leave a "
        f"linear model at chance). Within 0.05 of OPT at epsilon = 0.5: {{v:{H}|mnist-like: with 100 clients}} on "
        f"mnist-like, {{v:{H}|adult-like: with 100 clients}} on adult-like."),
    (H, "Fig. 6"): (
        f"Under label skew our clients still vote only for near-optimal candidates, spread over more of them: the "
        f"trade-off more pronounced non-iid is {{v:{H}|mnist-like: the trade-off is more pronounced}} on "
        f"mnist-like ({{n:{H}|mnist-like: the trade-off is more pronounced}}); the paper's CNN clients vote for "
        f"locally good candidates. OPT against alpha: {{v:{H}|mnist-like: decreasing alpha}} on mnist-like, "
        f"{{v:{H}|digits: decreasing alpha}} on digits (a convex model drifts little)."),
    (H, "Fig. 9"): (
        f"Federated averaging of a convex model ends near the same optimum at every n with the same total data: OPT "
        f"n = 50 above n = 250 is {{v:{H}|cifar-like: OPT decreases a bit}} on cifar-like "
        f"({{n:{H}|cifar-like: OPT decreases a bit}}) and {{v:{H}|adult-like: OPT decreases a bit}} on adult-like."),
    (H, "Fig. 11"): (
        f"As Fig. 9: OPT at n = 50 and n = 250 (alpha = 5) {{v:{H}|cifar-like: OPT decreases further}} on cifar-like "
        f"and {{v:{H}|adult-like: OPT decreases further}} on adult-like. The Adult failure case (n = 50, alpha = 0.5): "
        f"{{v:{H}|adult-like: the failure case}} ({{n:{H}|adult-like: the failure case}} in discovery, "
        f"{{r:{H}|adult-like: the failure case}} on the fresh seeds): on the adult-like stand-in OPT itself stays "
        f"high at alpha = 0.5, so the paper's premise ('where OPT itself performs poorly') does not arise."),
    (H, "Fashion-MNIST"): (
        "What 5 runs of reduced training (2 x 2), with no replication, can and cannot say. Fig. 6's 'trade-off more "
        f"pronounced non-iid' on Fashion-MNIST: {{v:{H}|Fashion-MNIST, softmax regression: the trade-off is more}} "
        f"({{n:{H}|Fashion-MNIST, softmax regression: the trade-off is more}}) with the softmax regression, "
        f"{{v:{H}|Fashion-MNIST, MLP: the trade-off is more}} ({{n:{H}|Fashion-MNIST, MLP: the trade-off is more}}) "
        f"with the MLP; on mnist-like it is {{v:{H}|mnist-like: the trade-off is more}}. A result that the runs "
        "cannot tell from zero is absence of evidence, not evidence that a stand-in's reversal is the stand-in's "
        "and not the paper's. Fig. 5's RANDGUESS level on real images: "
        f"{{v:{H}|Fashion-MNIST, softmax regression: RANDGUESS hovers}} and {{v:{H}|Fashion-MNIST, MLP: RANDGUESS "
        f"hovers}}, against cifar-like's {{v:{H}|cifar-like: RANDGUESS hovers}} (cifar-like stands in for a set we "
        "do not have). An image data set cannot speak to the adult-like stand-in's Fig. 4 result "
        f"({{v:{H}|adult-like: only a few candidates}}): tabular data and a different model."),
}
CONCLUSIONS.update({(P, f"Table {i}"): _table(i) for i in range(1, 10)})


def conclusion(paper: str, figure: str, folder=None) -> str | None:
    """The conclusion about ``paper``'s ``figure``, filled from the stored JSON (None: there is none)."""
    template = CONCLUSIONS.get((paper, figure))
    return render(template, folder) if template else None
