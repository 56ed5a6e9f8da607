"""The DP-BO Explorer: the landing page, and the navigation over every page in pages/.

The menu is ``st.navigation`` over ``st.Page`` objects
(:func:`ui.kit.routes.menu_pages`): the known pages with their title, icon and
explicit address, and any other file in ``pages/`` under its file-derived
title (the file name's number gives the order), so a new page needs no change
here. The engine is imported only by the page that runs, after the menu is
sent.
"""

from __future__ import annotations

import time

import streamlit as st

from ui.kit.reruns import charge_this_run
from ui.kit.reruns import install as install_rerun_limit

from ui.kit.routes import (
    ACCOUNTANT,
    APP_TITLE,
    FAVICON,
    FBO,
    REPRODUCTION,
    ROUTES,
    TRADEOFF,
    app_settings,
    menu_pages,
    page_link,
)

ALGORITHMS = [
    ("TS", "each agent runs Thompson sampling alone; the baseline every other method must beat.",
     "Dai et al., FTS, NeurIPS 2020"),
    ("FTS", "agents borrow other agents' sampled random-feature vectors to explore faster.",
     "Dai et al., FTS, NeurIPS 2020"),
    ("FTS-DE", "a central server averages the agents' vectors, one average per sub-region of the domain "
     "(distributed exploration).", "Dai et al., DP-FTS-DE, NeurIPS 2021"),
    ("DP-FTS / DP-FTS-DE", "the server subsamples agents (q), clips their vectors (S) and adds Gaussian noise (z), "
     "so no single agent's data can be told from the broadcast.", "Dai et al., DP-FTS-DE, NeurIPS 2021"),
    ("DP-HYPE", "clients vote for their k best hyperparameters; noise under secure summation hides each vote.",
     "DP-HYPE: distributed differentially private hyperparameter search"),
    ("PO-GP-UCB", "a data owner releases a randomly projected private copy of its inputs; a modeler runs GP-UCB "
     "on it.", "Kharkovskii et al., ICML 2020"),
]


def home() -> None:
    from engine.fbo.presets import PRESETS   # the engine loads after the menu is sent
    from engine.privacy.paper import paper_epsilons

    st.set_page_config(page_title=APP_TITLE, page_icon=FAVICON, layout="wide")
    st.title(APP_TITLE)
    st.markdown(
        "#### Choose privacy settings for collaborative optimisation by watching what they cost\n"
        "Several parties (hospitals, phones, labs) want to tune the same kind of model together without revealing "
        "their own data. This dashboard simulates how they do it with **private federated Bayesian optimisation** "
        "and **private hyperparameter search**: pick an algorithm, a privacy budget and the knobs of its mechanism, "
        "and watch convergence and privacy loss grow, live.")

    start, presets = st.columns([3, 2], gap="large")
    with start:
        st.subheader("How to start")
        st.markdown(
            "1. Open **Federated BO** and press **Run**: the defaults compare TS with DP-FTS-DE on a synthetic task "
            "in a few seconds.\n"
            "2. Change the privacy budget ε\\* or the noise z and run again: the curves show what privacy costs in "
            "utility.\n"
            "3. Use the **Privacy accountant** to see why the same run can be quoted with different ε, and the "
            "**Teaching view** to see what the server does in one iteration.\n\n"
            "Every page keeps its settings in the link, so you can share a configuration by copying the address.")
    with presets:
        st.subheader("Paper presets")
        st.caption("Load a configuration from the DP-FTS-DE paper in one click.")
        for name, label in (("fig2a", "Fig. 2a · benefit of distributed exploration"),
                            ("fig2c", "Fig. 2c · impact of q on utility"),
                            ("fig2d", "Fig. 2d · impact of z on utility")):
            page_link(FBO, label, icon=":material/play_circle:", query_params={"preset": name},
                      help=PRESETS[name]["label"])
        page_link(ACCOUNTANT, "Fig. 2c-d · privacy losses recomputed", icon=ACCOUNTANT.icon,
                  query_params={"preset": "fig2"},
                  help=f"The paper's epsilons {paper_epsilons()} next to ours.")
        page_link(TRADEOFF, "Fig. 3a · landmine privacy against utility", icon=TRADEOFF.icon,
                  query_params={"preset": "fig3a"}, help=PRESETS["fig3a"]["label"])
        page_link(REPRODUCTION, "Fig. 2-3 · which claims hold over 100 runs", icon=REPRODUCTION.icon,
                  help="Our curves beside the paper's claims, each judged over 100 paired runs.")

    st.subheader("Pages")
    cols = st.columns(3, gap="medium")
    for i, route in enumerate(ROUTES):
        with cols[i % 3].container(border=True):
            page_link(route, f"**{route.title}**", icon=route.icon)
            st.caption(route.blurb)

    st.subheader("Algorithms")
    st.markdown("\n".join(f"- **{name}**: {what} *({paper})*" for name, what, paper in ALGORITHMS))
    st.caption("Everything runs in this process from embedded defaults; no data leaves the machine. "
               "The same engine runs headless: `python -m engine fbo --help`.")


install_rerun_limit()       # one visitor's reruns are capped: a flood of them cannot stall the server
app_settings()

started = time.thread_time()
try:
    st.navigation(menu_pages(home)).run()
finally:
    charge_this_run(time.thread_time() - started)     # the page's CPU time, counted against its visitor's share
