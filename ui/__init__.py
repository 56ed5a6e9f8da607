"""The dashboard's modules, shared by app.py and the pages, grouped by tool as engine/ is.

``ui.kit``: what every page uses.

- ``routes``: every page's file, title, icon and address; the product's menu
  (``menu_pages``, ``use_the_products_menu``); links between pages.
- ``opening``: the page opening (``open_page``): route, controls seeded from a
  ``?preset=`` link and the URL, one note naming each ignored link value with
  its allowed range.
- ``state``: controls' values in the session and in the URL (``Param``).
- ``errors``: ConfigError sentences under the control of their field.
- ``cached``: pure engine calls kept across reruns and sessions.
- ``run_loop``: the one loop that runs heavy work (priced once with
  ``checked``, live, stoppable); ``run_pool``: the server-wide pool of heavy
  runs; ``background``: one engine call as a live line; ``compute``: light work,
  stoppable, never queued.
- ``charts`` (every chart with its caption), ``figure_style`` (the common look
  and the palette), ``presenter``, ``downloads``, ``tables``, ``table_build``.

One package per tool: ``fbo`` (``controls``, ``figures``, ``results``, and the
teaching view's ``teaching_controls`` and ``teaching_figures``), ``hype``,
``pogpucb``, ``privacy`` (the accountant's ``controls``, ``figures`` and
``questions``), ``audit`` (``controls``, ``figures``, ``panel``), ``sweep``,
``reproduction``. A ``controls`` module holds the page's ``PARAMS`` and its
``init`` (``fbo.controls.settings()`` is how another page reads the Federated
BO settings); a ``figures`` module holds plain functions from data to
``plotly.graph_objects.Figure`` that never import streamlit, so tests can call
them without a browser.
"""
