"""The hosted explorer's entry point: ``app.py`` served as a Streamlit ``st.App`` (the Dockerfile's command).

``streamlit run serve.py`` finds the ``app`` below and serves ``app.py`` through it, with what a public server
adds (:mod:`ui.kit.serving`): in hosting mode Streamlit's metrics endpoint is closed and an unexpected error in a
page is one sentence, not Streamlit's error box; and before it serves, everything the pages import is imported
(not by the first visits, holding every other request) and frozen out of the garbage collector's walks.
``streamlit run app.py`` (the quick start) serves the same pages without them.
"""

import streamlit as st

from ui.kit.serving import middleware, on_script_error, settle_heap

settle_heap()       # the pages' modules imported now, then frozen out of the collector's walks (ui/kit/serving.py)
app = st.App("app.py", middleware=middleware(), on_script_error=on_script_error)
