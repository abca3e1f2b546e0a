"""Re-checking a source study's findings on the user's own device (issue 28).

A study is a list of the paper's observations, each with what it needs of the device and a check that turns the
stored trials of the study's plan into a :class:`~edgebench.study.records.Verdict`.  The checks rest on intervals
over repeated trials or steps (:mod:`edgebench.study.stats`), never on one trial, and never on an estimate: an
observation about energy on a device without a power sensor cannot be checked there.

``records`` holds the typed records, ``stats`` the tests, ``decide`` the rule from intervals to verdicts,
``device`` what the target offers, ``plan`` the matrix scaled to it, ``tx2``/``dnntune``/``mnn_suite`` the three
studies, ``report`` the terminal table, JSON and HTML.
"""
