"""DP-FTS-DE and DP-HYPE as Flower apps, and the bridge that audits a Flower strategy.

Importing this package needs no Flower: the modules that subclass Flower's
classes (``fbo_strategy``, ``fbo_client``, ``hype_strategy``, ``hype_client``,
``apps``) import ``flwr`` at their top and are loaded only by a Flower app or
a test that has it. :mod:`engine.flower.export` writes a ready Flower app and
needs no Flower; :mod:`engine.flower.agent` and :mod:`engine.flower.voter` are
the clients' numpy logic; :mod:`engine.flower.audit` plays the privacy
audit's distinguishing game against any strategy's ``aggregate_train``.

The strategies call the engine's mechanism functions
(:func:`engine.fbo.server.aggregate`, :func:`engine.fbo.weights.subregion_weights`,
:mod:`engine.hype.voting`, :func:`engine.fbo.plan.make_plan` for the
accountant), so a deployed round is the simulated one.
"""
