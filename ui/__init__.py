"""Dashboard helpers shared by the pages.

``ui.common`` holds the Streamlit glue (errors next to controls, query
parameters, the host's size limit, cached engine calls); the ``*_figures``
modules are plain functions from data to ``plotly.graph_objects.Figure`` and
never import streamlit, so tests can call them without a browser.
"""
