"""The dashboard's modules, shared by app.py and the pages.

- ``routes``: every page's file, title, icon and address; links between pages.
- ``state``: controls' values in the session and in the URL (``Param``).
- ``errors``: ConfigError sentences under the control of their field.
- ``cached``: pure engine calls kept across reruns and sessions.
- ``live_run``: the one loop that runs heavy work (priced, live, stoppable).
- ``*_controls``: one page's controls and the settings they describe
  (``fbo_controls.settings()`` is how another page reads the Federated BO
  settings); ``fbo_results``: the panels around a federated BO run.
- ``*_figures``: plain functions from data to ``plotly.graph_objects.Figure``
  that never import streamlit, so tests can call them without a browser.
"""
